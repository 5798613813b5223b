// Multi-factor pages (templates/mfa/): after a passkey is registered, show the sign-in security page again
// (it lists the new passkey and offers recovery codes).
document.addEventListener("otp_webauthn.register_complete", () => {
  window.location.assign(window.location.pathname);
});

// Sends Django's CSRF token with every htmx request (the token is read from the cookie-less
// hidden input that each page renders, so the cookie can stay HttpOnly-agnostic).
document.addEventListener("htmx:configRequest", (event) => {
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  if (input) event.detail.headers["X-CSRFToken"] = input.value;
});

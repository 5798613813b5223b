// django-otp-webauthn's passkey scripts call gettext() for their messages. Concord's pages are in English
// (LANGUAGE_CODE en-us), so the messages are shown as written; a static file rather than Django's
// JavaScript catalog view, so that every script is a static file (the Content-Security-Policy is 'self').
window.gettext = window.gettext || ((text) => text);

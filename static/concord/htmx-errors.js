// Errors of htmx requests are shown in place, whatever DEBUG says.
//
// django-htmx's debug script (loaded by its {% htmx_script %} tag when DEBUG is on) replaces the whole
// document with an error response, which wiped the item page on a refused submit; templates/base.html
// therefore loads htmx itself and this script instead. The rule, on every page:
// * a 400, 409 or 422 answered with an HTML fragment (a form redrawn with its reason, the list of
//   missing answers) is swapped into the request's target, as a 200 would be;
// * anything else that failed (403, 404, 413, 429, 5xx, a plain-text reason, the generic error card,
//   the server out of reach) leaves the page as it is and says what happened in an alert at the top
//   of the page, which the next successful request clears.
// A page script may decide first (item.js does for its units): a response it already chose to swap is
// left alone.
(() => {
  "use strict";
  const TITLES = { 400: "Not saved", 403: "Not allowed", 404: "Not found", 409: "Changed meanwhile", 413: "Too large", 429: "Too many requests" };

  function region() {
    let box = document.getElementById("htmx-error");
    if (!box) {
      box = document.createElement("div");
      box.id = "htmx-error";
      box.className = "htmx-error";
      box.setAttribute("role", "alert");
      box.hidden = true;
      const main = document.getElementById("main") || document.body;
      main.prepend(box);
    }
    return box;
  }

  function show(text) {
    const box = region();
    box.textContent = text;
    box.hidden = false;
  }

  function clear() {
    const box = document.getElementById("htmx-error");
    if (box && !box.hidden) {
      box.hidden = true;
      box.textContent = "";
    }
  }

  const isDocument = (html) => /^\s*(<!doctype|<html)/i.test(html);

  function parse(html) {
    return new DOMParser().parseFromString(html, "text/html");
  }

  // The generic error card of concord.http (a root element with role="alert" and a heading) is a
  // message, not a piece of the page: it is shown in the alert, not swapped into a form's place.
  function genericCard(doc) {
    const root = doc.body.firstElementChild;
    return !!(root && root.getAttribute("role") === "alert" && root.querySelector("h1, h2") && doc.body.children.length === 1);
  }

  function reason(code, type, body) {
    const title = TITLES[code] || (code >= 500 ? `The server failed (${code})` : `Refused (${code})`);
    let text = "";
    if (type.startsWith("text/plain") || type.startsWith("application/json")) {
      text = body;
    } else if (body) {
      const doc = parse(body);
      // The most specific element that carries the reason: the message, else the alert, else the page.
      const main = [".error", "[role=alert]", "main"].map((s) => doc.querySelector(s)).find(Boolean) || doc.body;
      text = main ? main.textContent : "";
    }
    text = (text || "").replace(/\s+/g, " ").trim().slice(0, 500);
    if (code >= 500) text = "Nothing was saved; try again, and tell the study's researcher if it keeps failing." + (text && text.length < 200 ? ` (${text})` : "");
    return text ? `${title}: ${text}` : `${title}.`;
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    const xhr = event.detail.xhr;
    const code = xhr.status;
    if (code < 400) {
      clear();
      return;
    }
    if (event.detail.shouldSwap) return; // a page script chose to show this fragment
    const type = (xhr.getResponseHeader("Content-Type") || "").toLowerCase();
    const body = xhr.responseText || "";
    if ([400, 409, 422].includes(code) && type.startsWith("text/html") && body.trim() && !isDocument(body) && !genericCard(parse(body))) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
      clear();
      return;
    }
    event.detail.shouldSwap = false;
    show(reason(code, type, body));
  });

  document.addEventListener("htmx:sendError", () => {
    show("Not sent: the server could not be reached. Nothing was saved; check the connection and try again.");
  });
})();

// Keyboard decisions on the case page. Every action is also a visible control (mouse works the
// same); keys are ignored while typing in a text field, where Escape leaves the field.
(() => {
  "use strict";
  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(el.type)));

  const form = () => document.getElementById("decision-form");

  // A click on the button itself: htmx sends the name and value of the submit button that was clicked
  // (unresolved=1), which form.requestSubmit(button) does not tell it.
  const submit = (unresolved) => {
    const button = document.getElementById(unresolved ? "save-unresolved" : "save-decision");
    if (button) button.click();
  };

  document.addEventListener("keydown", (event) => {
    const f = form();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit(false);
      return;
    }
    // `c` focuses the confidence; a digit 1-5 there sets it and gives the keys back to the page.
    const active = document.activeElement;
    if (active && active.id === "confidence" && /^[1-5]$/.test(event.key) && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      active.value = event.key;
      active.dispatchEvent(new Event("change", { bubbles: true }));
      active.blur();
      return;
    }
    if (typing(document.activeElement)) {
      if (event.key === "Escape") document.activeElement.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const help = document.getElementById("keys-help");
    if (event.key === "?") {
      if (help) help.classList.toggle("hidden");
      return;
    }
    if (event.key === "Escape" && help) {
      help.classList.add("hidden");
      return;
    }
    if (!f) return;
    const option = f.querySelector(`input[data-option-key="${CSS.escape(event.key)}"]`);
    if (option) {
      event.preventDefault();
      if (option.type === "checkbox") option.checked = !option.checked;
      else option.checked = true;
      option.focus();
      return;
    }
    switch (event.key) {
      case "c": {
        event.preventDefault();
        const select = document.getElementById("confidence");
        if (select) select.focus();
        break;
      }
      case "g": {
        const gap = document.getElementById("guideline-gap");
        if (gap) gap.checked = !gap.checked;
        break;
      }
      case "v": {
        event.preventDefault();
        const value = document.getElementById("gold-value");
        if (value) value.focus();
        break;
      }
      case "r": {
        event.preventDefault();
        const rationale = document.getElementById("rationale");
        if (rationale) rationale.focus();
        break;
      }
      case "s":
        event.preventDefault();
        submit(false);
        break;
      case "u":
        event.preventDefault();
        submit(true);
        break;
      case "n": {
        const next = document.getElementById("next-case");
        if (next) window.location.assign(next.href);
        break;
      }
      default:
        break;
    }
  });
})();

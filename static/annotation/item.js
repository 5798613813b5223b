// The item page: keyboard cursor over units, htmx status handling, alignment clicks, active time.
// Nothing is batched here: every answer is posted by htmx at once and the server's fragment
// replaces the unit, so the page always shows what the server stored.
(() => {
  "use strict";
  const ws = document.getElementById("workspace");
  if (!ws) return;
  const status = document.getElementById("save-status");
  const overlay = document.getElementById("keys-overlay");
  const isOpen = ws.dataset.open === "1";
  let activeKey = null; // data-unit of the unit under the cursor
  let advance = false; // the last answer came from the keyboard: move on once it is saved
  let inFlight = 0;
  let lastUnitKey = null;
  let expired = false;
  const pending = []; // option keys typed while a save was in flight, replayed in order
  let overlayReturn = null;

  const units = () => Array.from(ws.querySelectorAll(".unit"));
  const unitByKey = (key) => ws.querySelector(`.unit[data-unit="${CSS.escape(key)}"]`);
  const activeUnit = () => (activeKey && unitByKey(activeKey)) || null;
  const token = () => (ws.querySelector("input[name=csrfmiddlewaretoken]") || {}).value || "";

  function say(text, kind) {
    if (!status) return;
    status.textContent = text;
    status.dataset.kind = kind || "";
  }

  function activate(unit, focus = true) {
    if (!unit) return;
    ws.querySelectorAll(".unit.active").forEach((u) => u.classList.remove("active"));
    unit.classList.add("active");
    activeKey = unit.dataset.unit;
    const details = unit.closest("details");
    if (details && !details.open) details.open = true;
    if (focus) {
      unit.focus({ preventScroll: true });
      unit.scrollIntoView({ block: "nearest" });
    }
    // A mouse activation never scrolls: moving the page between mousedown and mouseup would make
    // the click land on another option than the one pressed.
  }

  function move(delta) {
    const list = units();
    if (!list.length) return;
    const i = list.indexOf(activeUnit());
    const next = i < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.min(Math.max(i + delta, 0), list.length - 1);
    activate(list[next]);
  }

  const needsAnswer = (unit) => unit.querySelector('.q[data-answered="0"][data-required="1"]:not([data-kind="text"]):not([data-kind="number"])');

  function moveOn(unit) {
    if (needsAnswer(unit)) return activate(unit);
    const list = units();
    const i = list.indexOf(unit);
    const rest = list.slice(i + 1);
    activate(rest.find(needsAnswer) || rest[0] || unit);
  }

  function answer(key) {
    const unit = activeUnit();
    if (!unit) return false;
    const input = Array.from(unit.querySelectorAll("input[data-key]")).find((el) => el.dataset.key === key && !el.disabled);
    if (!input) return false;
    if (inFlight) {
      pending.push({ unit: unit.dataset.unit, key });
      return true;
    }
    if (input.type === "radio") {
      advance = true;
      if (input.checked) {
        moveOn(unit);
        return true;
      }
      input.checked = true;
    } else {
      advance = false;
      input.checked = !input.checked;
    }
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  function toggleOverlay(show) {
    if (!overlay) return;
    const visible = show === undefined ? overlay.classList.contains("hidden") : show;
    overlay.classList.toggle("hidden", !visible);
    if (visible) {
      overlayReturn = document.activeElement;
      document.getElementById("keys-close").focus();
    } else if (overlayReturn) {
      overlayReturn.focus();
    }
  }

  // Submitting waits for the saves in flight, so the last answer is part of what is submitted.
  let submitWhenIdle = false;
  function submitItem() {
    if (inFlight || pending.length) {
      submitWhenIdle = true;
      return;
    }
    const button = document.getElementById("submit-button");
    if (button) button.click();
  }

  const typing = (el) => el && (el.tagName === "TEXTAREA" || el.tagName === "SELECT" || (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit", "hidden"].includes(el.type)));

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (overlay && !overlay.classList.contains("hidden")) {
      if (event.key === "Escape" || event.key === "?") {
        event.preventDefault();
        toggleOverlay(false);
      }
      return;
    }
    if (typing(target)) {
      if (event.key === "Escape") {
        target.blur(); // leaving the field fires "change", which saves it
        const unit = target.closest(".unit");
        if (unit) activate(unit);
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        target.blur();
        submitItem();
      }
      return;
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      submitItem();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && target.closest && target.closest("#skip, #proposals")) {
      if (event.key !== "?") return;
    }
    switch (event.key) {
      case "?":
        event.preventDefault();
        toggleOverlay();
        return;
      case "j":
      case "ArrowDown":
        event.preventDefault();
        move(1);
        return;
      case "k":
      case "ArrowUp":
        event.preventDefault();
        move(-1);
        return;
      case "n":
        event.preventDefault();
        submitItem();
        return;
      case "Enter": {
        const unit = activeUnit();
        const entry = unit && unit.querySelector("[data-entry]:not(:disabled)");
        if (entry && (target === unit || target === document.body)) {
          event.preventDefault();
          entry.focus();
        }
        return;
      }
      default:
        if (event.key.length === 1 && isOpen && answer(event.key)) event.preventDefault();
    }
  });

  ws.addEventListener("focusin", (event) => {
    const unit = event.target.closest(".unit");
    if (unit && unit.dataset.unit !== activeKey) activate(unit, false);
  });
  ws.addEventListener("click", (event) => {
    const goto = event.target.closest("[data-goto]");
    if (goto) {
      event.preventDefault();
      activate(unitByKey(goto.dataset.goto));
      return;
    }
    const source = event.target.closest("[data-src-index]");
    if (source && isOpen) {
      const unit = activeUnit();
      const box = unit && unit.querySelector(`input[data-align-index="${CSS.escape(source.dataset.srcIndex)}"]`);
      if (box && !box.disabled) {
        box.checked = !box.checked;
        box.dispatchEvent(new Event("change", { bubbles: true }));
      }
      return;
    }
    const unit = event.target.closest(".unit");
    if (unit && unit.dataset.unit !== activeKey) activate(unit, false);
  });

  document.getElementById("keys-button")?.addEventListener("click", () => toggleOverlay(true));
  document.getElementById("keys-close")?.addEventListener("click", () => toggleOverlay(false));

  // --- htmx: show what happened to every save -------------------------------------------------
  // What each request was for: its unit, and whether the cursor should move on once it is saved.
  const intents = new WeakMap();
  document.body.addEventListener("htmx:beforeRequest", (event) => {
    inFlight += 1;
    ws.dataset.idle = "0";
    const unit = event.detail.elt.closest && event.detail.elt.closest(".unit");
    lastUnitKey = unit ? unit.dataset.unit : null;
    intents.set(event.detail.xhr, { unitKey: lastUnitKey, advance });
    advance = false;
    if (unit) unit.classList.add("saving");
    say("Saving…", "busy");
  });
  document.body.addEventListener("htmx:beforeSwap", (event) => {
    const code = event.detail.xhr.status;
    if ((event.detail.xhr.responseURL || "").includes("/accounts/login/")) {
      // The session ended: the answer went to the login page, not into the database.
      event.detail.shouldSwap = false;
      expired = true;
      return;
    }
    if (code === 400 || code === 409) {
      // These answers carry a fragment (the conflict or the reason): show it, do not drop it.
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  document.body.addEventListener("htmx:afterRequest", (event) => {
    inFlight = Math.max(0, inFlight - 1);
    const xhr = event.detail.xhr;
    const code = xhr ? xhr.status : 0;
    const submitting = event.detail.elt && event.detail.elt.id === "submit-form";
    const time = new Date().toLocaleTimeString();
    if (code === 400 || code === 409 || code === 0 || code >= 500 || expired) submitWhenIdle = false; // show why first
    if (expired) {
      expired = false;
      say("Not saved: your session has ended. Reload the page and log in again; the last answer is NOT stored.", "error");
    } else if (code >= 200 && code < 300) {
      say(submitting ? "Submitted." : `Saved on the server at ${time}.`, "ok");
    } else if (code === 400) {
      say(submitting ? "Not submitted: the missing answers are listed below." : "Not saved: see the message next to the answer.", "error");
    } else if (code === 409) {
      say("Not saved: the answer was changed elsewhere. The newer answer and yours are shown.", "error");
    } else {
      say("Not saved: the server could not be reached or failed. Your last answer is NOT stored; try again.", "error");
      const unit = lastUnitKey && unitByKey(lastUnitKey);
      if (unit) {
        unit.classList.remove("saving");
        unit.classList.add("unsaved");
      }
      pending.length = 0;
      if (!inFlight) ws.dataset.idle = "1";
    }
  });
  document.body.addEventListener("htmx:afterSettle", (event) => {
    const intent = (event.detail.xhr && intents.get(event.detail.xhr)) || {};
    const unit = intent.unitKey && unitByKey(intent.unitKey);
    if (unit && intent.unitKey === activeKey) {
      unit.classList.add("active");
      // Move on only when this was the last save in flight: a newer one will decide for itself.
      if (intent.advance && !inFlight && !unit.querySelector(".conflict, .error")) moveOn(unit);
      else if (!ws.contains(document.activeElement) || document.activeElement === document.body) unit.focus({ preventScroll: true });
    }
    if (!inFlight && pending.length) {
      const next = pending.shift();
      const target = unitByKey(next.unit);
      if (target) {
        activate(target);
        answer(next.key);
      }
    }
    if (!inFlight && !pending.length) {
      ws.dataset.idle = "1";
      if (submitWhenIdle) {
        submitWhenIdle = false;
        submitItem();
      }
    }
  });

  // --- Active time on task: counted while the page is visible and used in the last minute ---
  if (isOpen && ws.dataset.timeUrl) {
    let lastActivity = Date.now();
    let lastTick = Date.now();
    let activeMs = 0;
    const touch = () => {
      lastActivity = Date.now();
    };
    ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "scroll"].forEach((name) => window.addEventListener(name, touch, { passive: true }));
    const flush = (beacon) => {
      if (activeMs < 1000) return;
      const body = new FormData();
      body.append("seconds", (activeMs / 1000).toFixed(1));
      body.append("csrfmiddlewaretoken", token());
      activeMs = 0;
      if (beacon && navigator.sendBeacon) navigator.sendBeacon(ws.dataset.timeUrl, body);
      else fetch(ws.dataset.timeUrl, { method: "POST", body, credentials: "same-origin", headers: { "X-CSRFToken": token() } }).catch(() => {});
    };
    setInterval(() => {
      const now = Date.now();
      if (!document.hidden && now - lastActivity < 60000) activeMs += now - lastTick;
      lastTick = now;
      if (activeMs >= 30000) flush(false);
    }, 5000);
    window.addEventListener("pagehide", () => flush(true));
  }

  // Start on the first unit that still needs an answer.
  const list = units();
  activate(list.find(needsAnswer) || list[0], true);
})();

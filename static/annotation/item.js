// The item page: keyboard cursor over units, htmx status handling, alignment clicks, active time.
// Every question kind answers by keys: option keys pick or tick options, sentence numbers tick the
// sentences of an alignment or evidence question, Enter types into a text or number field.
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
  const pending = []; // answers typed while a save was in flight, replayed in order
  const evidenceOff = new Set(); // units where Esc handed the digits back to the options
  let numberBuffer = ""; // digits of a sentence number being typed (more than 9 sentences)
  let overlayReturn = null;

  // Cursor stops: the units that ask something (a sentence of a pool without sentence questions is
  // shown for reading, not stopped at); every unit when none asks anything.
  const units = () => {
    const all = Array.from(ws.querySelectorAll(".unit"));
    const asking = all.filter((u) => u.querySelector(".q"));
    return asking.length ? asking : all;
  };
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
    if (unit.dataset.unit !== activeKey) numberBuffer = "";
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
    evidenceOff.delete(unit.dataset.unit);
    if (input.type === "radio") {
      if (input.checked) {
        // Already the answer: nothing to save, so move on now and leave no flag for a later save.
        moveOn(unit);
        return true;
      }
      input.checked = true;
      advance = true;
    } else {
      advance = false;
      input.checked = !input.checked;
    }
    input.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  // The alignment (evidence) question that sentence numbers serve in a unit: the unit's own, once its
  // option questions are answered (until then digits are option keys), unless Esc handed them back.
  function alignmentOf(unit) {
    if (!unit || evidenceOff.has(unit.dataset.unit)) return null;
    const question = unit.querySelector('.q[data-kind="alignment"]');
    if (!question || !question.querySelector("input[data-align-index]:not(:disabled)")) return null;
    const open = unit.querySelector('.q[data-answered="0"][data-required="1"]:not([data-kind="alignment"]):not([data-kind="text"]):not([data-kind="number"])');
    return open ? null : question;
  }

  // Tick or untick sentence ``number`` (as people count, from 1) of the unit's alignment question.
  function toggleSentence(unitKey, number) {
    const unit = unitByKey(unitKey);
    const question = alignmentOf(unit);
    if (!question) return;
    const box = question.querySelector(`input[data-align-index="${number - 1}"]`);
    if (!box || box.disabled) {
      say(`There is no sentence ${number} to tick here.`, "error");
      return;
    }
    if (inFlight) {
      pending.push({ unit: unitKey, sentence: number });
      return;
    }
    advance = false;
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function flushNumber() {
    const typed = numberBuffer;
    numberBuffer = "";
    if (typed && activeKey) toggleSentence(activeKey, parseInt(typed, 10));
  }

  // A digit typed into an alignment question: toggled at once when no longer number starts with the
  // digits typed so far (always, with 9 sentences or fewer); otherwise Enter ends the number. No timer
  // decides anything, so fast and slow typists get the same result.
  function sentenceDigit(key) {
    const question = alignmentOf(activeUnit());
    if (!question || !/^[0-9]$/.test(key)) return false;
    const count = question.querySelectorAll("input[data-align-index]").length;
    numberBuffer += key;
    if (parseInt(numberBuffer, 10) * 10 > count) flushNumber();
    else say(`Sentence ${numberBuffer}… (Enter ticks it, another digit continues the number)`, "busy");
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
      } else if (event.key === "Tab") {
        // A modal dialog keeps the keyboard inside it until it is closed.
        const stops = Array.from(overlay.querySelectorAll("button, a[href], input, select, textarea, [tabindex]"))
          .filter((el) => !el.disabled && el.tabIndex >= 0);
        if (stops.length) {
          const i = stops.indexOf(document.activeElement);
          const next = event.shiftKey ? (i <= 0 ? stops.length - 1 : i - 1) : (i + 1) % stops.length;
          event.preventDefault();
          stops[next].focus();
        }
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
    if ((event.ctrlKey || event.metaKey) && (event.key === "z" || event.key === "Z") && !event.shiftKey) {
      const undo = document.getElementById("undo-button");
      if (undo && !inFlight) {
        event.preventDefault();
        undo.click();
      }
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
      case "ArrowDown": {
        event.preventDefault();
        // Moving on is allowed, but never silently past a required answer: the status says what is left.
        const left = activeUnit() && needsAnswer(activeUnit());
        move(1);
        if (left) {
          const legend = left.querySelector("legend");
          const prompt = legend ? legend.textContent.trim() : "a required question";
          const how = left.dataset.kind === "alignment" ? " (tick its sentences by their numbers)" : "";
          say(`Still to answer on the unit you left: ${prompt}${how}. The item cannot be submitted without it.`, "warn");
        }
        return;
      }
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
        if (!unit || !(target === unit || target === document.body || ws.contains(target))) return;
        if (target.tagName === "BUTTON" || target.tagName === "A" || target.tagName === "SUMMARY") return;
        event.preventDefault();
        if (numberBuffer) {
          flushNumber();
          return;
        }
        const entry = unit.querySelector("[data-entry]:not(:disabled)");
        if (entry) {
          entry.focus();
          return;
        }
        moveOn(unit); // done with ticking boxes (or the field is filled): on to the next unit
        return;
      }
      case "Escape": {
        const unit = activeUnit();
        if (unit && alignmentOf(unit)) {
          evidenceOff.add(unit.dataset.unit);
          say("The number keys answer the options again.", "");
        }
        return;
      }
      case "e": {
        // Back to ticking sentences after Esc (unless "e" is an option key of this unit).
        const unit = activeUnit();
        if (unit && evidenceOff.has(unit.dataset.unit) && !unit.querySelector('input[data-key="e"]')) {
          evidenceOff.delete(unit.dataset.unit);
          event.preventDefault();
          say("The number keys tick sentences again.", "");
          return;
        }
        if (isOpen && answer("e")) event.preventDefault();
        return;
      }
      default:
        if (event.key.length !== 1 || !isOpen) return;
        if (sentenceDigit(event.key) || answer(event.key)) event.preventDefault();
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
    const html = (event.detail.xhr.getResponseHeader("Content-Type") || "").startsWith("text/html");
    if ((code === 400 || code === 409) && html && event.detail.target && event.detail.target.closest("#workspace")) {
      // These answers carry a fragment (the conflict or the reason): show it, do not drop it. A plain-text
      // reason is shown at the top of the page (static/concord/htmx-errors.js).
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
    } else if (code === 400 && !(xhr.getResponseHeader("Content-Type") || "").startsWith("text/html")) {
      say(`Not saved: ${xhr.responseText}`, "error");
    } else if (code === 400) {
      say(submitting ? "Not submitted: the missing answers are listed below." : "Not saved: see the message next to the answer.", "error");
    } else if (code === 409) {
      say("Not saved: the answer was changed elsewhere. The newer answer and yours are shown.", "error");
    } else {
      say(code >= 400 && code < 500
        ? `Not saved: the server refused it (${code}); the reason is shown at the top of the page.`
        : "Not saved: the server could not be reached or failed. Your last answer is NOT stored; try again.", "error");
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
        if (next.sentence) toggleSentence(next.unit, next.sentence);
        else answer(next.key);
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

  // Start on the unit the address names (#unit-…: where an undo or a refused save sent the page back),
  // else on the first unit that still needs an answer.
  const list = units();
  const named = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (named && named.classList.contains("unit") && ws.contains(named)) {
    activate(named, true);
    named.scrollIntoView({ block: "center" });
  } else {
    activate(list.find(needsAnswer) || list[0], true);
  }
})();

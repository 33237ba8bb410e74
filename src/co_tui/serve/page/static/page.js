// co-tui's page around textual-serve's terminal (textual.js, loaded just before this file):
// - the terminal has the keyboard as soon as its connection opens, without a click, and again
//   when the window comes back; once the session ended, Restart has it (Enter restarts);
// - the terminal starts once the local font has loaded, so its cells are measured with it.
"use strict";

(() => {
  const body = () => document.body;
  const terminalInput = () =>
    document.querySelector(".textual-terminal .xterm-helper-textarea");

  // Only once connected: textual.js tells the app about focus over the WebSocket, and
  // sending on one still connecting throws.
  function giveKeyboard() {
    if (body().classList.contains("-closed")) {
      document.getElementById("restart").focus();
    } else if (body().classList.contains("-loaded")) {
      const input = terminalInput();
      if (input && document.activeElement !== input) input.focus();
    }
  }

  function restart() {
    const url = new URL(window.location.href);
    url.searchParams.delete("delay");
    window.location.href = url.pathname + url.search;
  }

  const startTerminal = window.onload; // textual.js's: creates the terminal and connects
  window.onload = async (event) => {
    document.getElementById("restart").addEventListener("click", restart);
    document.getElementById("start").addEventListener("click", restart);
    new MutationObserver(giveKeyboard).observe(body(), {
      attributes: true,
      attributeFilter: ["class"],
    });
    try {
      await document.fonts.load("16px 'Roboto Mono'");
    } catch (error) {
      console.warn("co-tui: the terminal font did not load", error);
    }
    if (startTerminal) startTerminal.call(window, event);
    giveKeyboard();
  };

  window.addEventListener("focus", () => {
    const active = document.activeElement;
    if (!active || active === body()) giveKeyboard();
  });
})();

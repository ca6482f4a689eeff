// The replay player: step, play and pause through the frames the server renders
// (each is a plain page; this only fetches the next one and swaps the frame in).
(function () {
  "use strict";
  let timer = null;

  function frame() { return document.getElementById("frame"); }

  async function go(step) {
    const link = frame().querySelector('[data-step="' + step + '"]');
    if (!link) return false;
    const url = link.getAttribute("href");
    const response = await fetch(url);
    if (!response.ok) { stop(); return false; }
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const next = page.getElementById("frame");
    const before = frame().dataset.move;
    frame().replaceWith(next);
    history.replaceState(null, "", url);
    return next.dataset.move !== before;
  }

  function stop() {
    if (timer !== null) { clearTimeout(timer); timer = null; }
  }

  function play() {
    stop();
    const tick = async () => {
      const moved = await go("next");
      const f = frame();
      if (moved && f.dataset.move !== f.dataset.total) {
        timer = setTimeout(tick, Number(document.getElementById("speed").value));
      } else { timer = null; }
    };
    timer = setTimeout(tick, Number(document.getElementById("speed").value));
  }

  document.getElementById("play").addEventListener("click", play);
  document.getElementById("pause").addEventListener("click", stop);
  document.getElementById("step").addEventListener("click", () => { stop(); go("next"); });
  if (document.querySelector(".player").dataset.autoplay === "1") play();
})();

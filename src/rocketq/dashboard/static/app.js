// Charts: every <canvas data-chart="/api/..."> polls its URL and draws the series it returns
// ({times: [ms...], series: {label: [values...]}}: the server-kept history, api.py) as lines
// with Chart.js.
"use strict";

function drawChart(canvas) {
  const every = Number(canvas.dataset.interval || 2000);
  const chart = new Chart(canvas, {
    type: "line",
    data: { labels: [], datasets: [] },
    options: {
      animation: false,
      plugins: { title: { display: true, text: canvas.dataset.title || "" } },
      scales: { y: { beginAtZero: true } },
    },
  });
  async function poll() {
    try {
      const answer = await fetch(canvas.dataset.chart);
      if (!answer.ok) { canvas.dataset.error = await answer.text(); return; }
      const data = await answer.json();
      const long = { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" };
      chart.data.labels = data.times.map((t) => (data.step_s >= 60
        ? new Date(t).toLocaleString([], long) : new Date(t).toLocaleTimeString()));
      chart.data.datasets = Object.entries(data.series).map(([label, values]) => ({
        label, data: values, borderWidth: 2, pointRadius: 1, spanGaps: true,
      }));
      chart.update();
      canvas.dataset.points = String(data.times.length);
    } finally {
      setTimeout(poll, every);
    }
  }
  poll();
}

// A range picker (<span class="ranges" data-for="<canvas id>"> of <button data-range="1h">)
// swaps the range= of its chart's URL; the next poll draws the new span.
function pickRange(span) {
  const canvas = document.getElementById(span.dataset.for);
  span.querySelectorAll("button[data-range]").forEach((button) => {
    button.addEventListener("click", () => {
      const url = new URL(canvas.dataset.chart, window.location.href);
      url.searchParams.set("range", button.dataset.range);
      canvas.dataset.chart = url.pathname + url.search;
      span.querySelectorAll("button").forEach((b) => b.classList.toggle("on", b === button));
    });
  });
}

window.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("canvas[data-chart]").forEach(drawChart);
  document.querySelectorAll(".ranges[data-for]").forEach(pickRange);
});

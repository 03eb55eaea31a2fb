// Charts: every <canvas data-chart="/api/..."> polls its URL and draws the series it returns
// ({times: [ms...], series: {label: [values...]}}) as lines with Chart.js.
"use strict";

function drawChart(canvas) {
  const url = canvas.dataset.chart;
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
      const answer = await fetch(url);
      if (!answer.ok) { canvas.dataset.error = await answer.text(); return; }
      const data = await answer.json();
      chart.data.labels = data.times.map((t) => new Date(t).toLocaleTimeString());
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

window.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("canvas[data-chart]").forEach(drawChart);
});

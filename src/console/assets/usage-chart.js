// The usage page's charts (issue 13 item 3): stacked bars of daily spend per capability and per model,
// drawn with Chart.js (served by the gateway, loaded before this file) from the JSON the page embeds in
// <script type="application/json" id="spend-data">. No inline script (CSP script-src 'self'). Tooltips
// show the exact amount from the nano-dollar strings; the bar heights use the float dollars.
(function () {
  'use strict';
  const source = document.getElementById('spend-data');
  if (!source || typeof window.Chart !== 'function') return;
  const data = JSON.parse(source.textContent);
  // Axis labels only (floats): six significant digits, so 0.000025 is not shown as 0.0000249999….
  const axisUsd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 6 });
  const palette = ['#1d4ed8', '#b45309', '#047857', '#b91c1c', '#7c3aed', '#0e7490', '#be185d', '#4d7c0f', '#57534e', '#c2410c'];

  // Exact USD text of a nano-dollar integer string: "$0.000123", "-$1.50".
  function usdText(nano) {
    const negative = nano.startsWith('-');
    const digits = (negative ? nano.slice(1) : nano).padStart(10, '0');
    const whole = digits.slice(0, -9).replace(/^0+(?=\d)/, '');
    const fraction = digits.slice(-9).replace(/0+$/, '').padEnd(2, '0');
    return (negative ? '-$' : '$') + whole + '.' + fraction;
  }

  function draw(canvas) {
    const series = data[canvas.getAttribute('data-series')];
    if (!Array.isArray(series)) return;
    new window.Chart(canvas, {
      type: 'bar',
      data: {
        labels: data.days,
        datasets: series.map((s, i) => ({ label: s.name, data: s.usd, nano: s.nano, backgroundColor: palette[i % palette.length] })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          x: { stacked: true },
          y: { stacked: true, ticks: { callback: (value) => axisUsd.format(value) } },
        },
        plugins: {
          tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + ': ' + usdText(ctx.dataset.nano[ctx.dataIndex]) } },
        },
      },
    });
  }

  document.querySelectorAll('canvas[data-series]').forEach(draw);
})();

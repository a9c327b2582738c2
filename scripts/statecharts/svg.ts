/**
 * Draws a laid-out chart (`layout.ts`) as plain SVG: rounded boxes for states with their
 * name and the events they handle in place (each in a group naming its state's path), a filled dot for each initial marker, a ringed
 * dot for each final one, and edges with arrowheads and their labels.
 */
import { layoutChart, LINE, NAME_SIZE, PAD, r, TEXT_SIZE, type Box, type Edge } from './layout.ts';
import type { Chart } from './walk.ts';

const FONT = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
const MARGIN = 16;

const escape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Lays out `chart` and answers the SVG document. */
export async function renderSvg(chart: Chart): Promise<string> {
  const layout = await layoutChart(chart);
  const title = `${chart.title} (${chart.id})`;
  const top = r(MARGIN + NAME_SIZE * LINE);
  const w = r(layout.width + 2 * MARGIN);
  const h = r(layout.height + top + MARGIN);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="${FONT}">`,
    `<title>${escape(title)}</title>`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>',
    `<rect width="${w}" height="${h}" fill="#fff"/>`,
    `<text x="${MARGIN}" y="${r(MARGIN + NAME_SIZE)}" font-size="${NAME_SIZE}" font-weight="bold" fill="#111">${escape(title)}</text>`,
    `<g transform="translate(${MARGIN},${top})">`,
    ...layout.boxes.map(drawBox),
    ...layout.edges.map(drawEdge),
    '</g>',
    '</svg>',
    '',
  ].join('\n');
}

function drawBox(box: Box): string {
  const cx = r(box.x + box.width / 2);
  const cy = r(box.y + box.height / 2);
  const radius = r(box.width / 2);
  if (box.kind === 'initial') {
    return `<circle cx="${cx}" cy="${cy}" r="${radius}" fill="#333"/>`;
  }
  if (box.kind === 'final') {
    return [
      `<circle cx="${cx}" cy="${cy}" r="${radius}" fill="#fff" stroke="#333" stroke-width="1.5"/>`,
      `<circle cx="${cx}" cy="${cy}" r="${r(radius - 4)}" fill="#333"/>`,
    ].join('\n');
  }
  const parts = [
    `<rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" rx="10" ry="10" fill="#eef3fb" fill-opacity="0.9" stroke="#35577d" stroke-width="1.5"/>`,
    `<text x="${r(box.x + box.width / 2)}" y="${r(box.y + PAD + NAME_SIZE)}" text-anchor="middle" font-size="${NAME_SIZE}" font-weight="bold" fill="#111">${escape(box.name)}</text>`,
  ];
  if (box.lines.length > 0) {
    const ruleY = r(box.y + PAD + NAME_SIZE * LINE + PAD / 4);
    parts.push(
      `<line x1="${box.x}" y1="${ruleY}" x2="${r(box.x + box.width)}" y2="${ruleY}" stroke="#35577d"/>`,
    );
    box.lines.forEach((line, i) => {
      const y = r(ruleY + PAD / 4 + (i + 1) * TEXT_SIZE * LINE - 3);
      const heading = line.endsWith(':');
      const style = heading ? ' font-style="italic" fill="#555"' : ' fill="#222"';
      parts.push(
        `<text x="${r(box.x + PAD)}" y="${y}" font-size="${TEXT_SIZE}"${style}>${escape(line)}</text>`,
      );
    });
  }
  // The console highlights the current state by this attribute (src/http/console-page).
  return [`<g class="state" data-state="${escape(box.path)}">`, ...parts, '</g>'].join('\n');
}

function drawEdge(edge: Edge): string {
  const d = edge.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
  const parts = [
    `<path d="${d}" fill="none" stroke="#333" stroke-width="1.2" marker-end="url(#arrow)"/>`,
  ];
  if (edge.label !== null) {
    const { x, y, width, height, lines } = edge.label;
    parts.push(
      `<rect x="${x}" y="${y}" width="${width}" height="${height}" fill="#fff" fill-opacity="0.85"/>`,
    );
    lines.forEach((line, i) => {
      const ly = r(y + 1 + (i + 1) * TEXT_SIZE * LINE - 3);
      parts.push(
        `<text x="${r(x + 2)}" y="${ly}" font-size="${TEXT_SIZE}" fill="#222">${escape(line)}</text>`,
      );
    });
  }
  // The console marks the transition just taken by these attributes (src/http/console-page).
  const ends = `data-from="${escape(edge.from)}" data-to="${escape(edge.to)}"`;
  return [`<g class="edge" ${ends}>`, ...parts, '</g>'].join('\n');
}

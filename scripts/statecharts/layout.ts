/**
 * Lays a chart out with ELK (elkjs, pure JavaScript): states as boxes (compound states
 * hold their children), initial and final markers, and one labelled edge per pair of
 * states a transition joins. Text is measured as monospace, so no browser is needed, and
 * every number is rounded so the picture is byte-for-byte stable.
 */
import elkBundle from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkLabel, ElkNode } from 'elkjs/lib/elk-api.js';
import { within, type Chart, type ChartState, type ChartTransition } from './walk.ts';

// elkjs is CommonJS: Node's default import is `module.exports`, whose `default` is the class.
const ELK = elkBundle.default;

export const NAME_SIZE = 14;
export const TEXT_SIZE = 11;
export const LINE = 1.35; // line height in em
export const PAD = 10;
const CHAR = 0.6; // em width of a monospace glyph
const MARKER = 16;

export const r = (n: number) => Number(n.toFixed(1));
const width = (text: string, size: number) => text.length * size * CHAR;

/** A positioned shape, in absolute coordinates. */
export interface Box {
  readonly kind: 'state' | 'initial' | 'final';
  /** The state's dotted path (`data-state` in the picture, for the console); '' for markers. */
  readonly path: string;
  readonly name: string;
  readonly lines: readonly string[];
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface Edge {
  /** The state the edge leaves, by path; `[*]` for an initial marker. */
  readonly from: string;
  /** The state the edge enters, by path; `[*]` for a final marker. */
  readonly to: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
  readonly label: {
    readonly x: number;
    readonly y: number;
    readonly width: number;
    readonly height: number;
    readonly lines: readonly string[];
  } | null;
}

export interface Layout {
  readonly width: number;
  readonly height: number;
  /** Outer boxes first, so children are drawn over their parents. */
  readonly boxes: readonly Box[];
  readonly edges: readonly Edge[];
}

/** `event [guard]`: what an edge or a line inside a state shows. */
export function trigger(t: ChartTransition): string {
  return t.guard === null ? t.event : `${t.event} [${t.guard}]`;
}

/** Transitions that leave no state: handled where they are (target none or itself). */
export function staysOn(chart: Chart, path: string): string[] {
  const stays = chart.transitions.filter(
    (t) => t.source === path && (t.target === null || t.target === path),
  );
  return [...new Set(stays.map((t) => t.event))];
}

/** Transitions from a compound state to one of its own descendants. */
export function movesInside(chart: Chart, path: string): string[] {
  const inside = chart.transitions.filter(
    (t) => t.source === path && t.target !== null && t.target !== path && within(t.target, path),
  );
  return inside.map((t) => `${trigger(t)} → ${(t.target ?? '').slice(path.length + 1)}`);
}

/** The text lines a state's box carries under its name. */
export function stateLines(chart: Chart, path: string): string[] {
  const stays = staysOn(chart, path);
  const moves = movesInside(chart, path);
  return [
    ...(stays.length > 0 ? ['stays on:', ...stays] : []),
    ...(moves.length > 0 ? ['moves inside on:', ...moves] : []),
  ];
}

const nameOf = (state: ChartState) => state.path.slice(state.path.lastIndexOf('.') + 1);

function headerHeight(lines: readonly string[]): number {
  return NAME_SIZE * LINE + (lines.length > 0 ? PAD / 2 + lines.length * TEXT_SIZE * LINE : 0);
}

function stateNode(chart: Chart, state: ChartState): ElkNode {
  const lines = stateLines(chart, state.path);
  const w = Math.max(width(nameOf(state), NAME_SIZE), ...lines.map((l) => width(l, TEXT_SIZE)));
  const h = headerHeight(lines);
  if (!state.compound) return { id: state.path, width: r(w + 2 * PAD), height: r(h + 2 * PAD) };
  return {
    id: state.path,
    children: [],
    layoutOptions: {
      'elk.padding': `[top=${r(h + 2 * PAD)},left=${PAD},bottom=${PAD},right=${PAD}]`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      // Wide enough for its header. Under direction DOWN, ELK's layered algorithm reads a
      // hierarchical node's minimum transposed, (height, width): measured with elkjs 0.12.
      'elk.nodeSize.minimum': `(0,${r(w + 2 * PAD)})`,
    },
  };
}

function edge(
  id: string,
  source: string,
  target: string,
  lines: readonly string[],
): ElkExtendedEdge {
  const label: ElkLabel = {
    text: lines.join('\n'),
    width: r(Math.max(...lines.map((l) => width(l, TEXT_SIZE))) + 4),
    height: r(lines.length * TEXT_SIZE * LINE + 2),
  };
  return { id, sources: [source], targets: [target], labels: lines.length > 0 ? [label] : [] };
}

/** Lays out `chart`: states nested as in the machine, edges for transitions between states. */
export async function layoutChart(chart: Chart): Promise<Layout> {
  const root: ElkNode = { id: `${chart.id}#root`, children: [] };
  const nodes = new Map<string, ElkNode>(chart.states.map((s) => [s.path, stateNode(chart, s)]));
  const containerOf = (s: ChartState) => (s.parent === null ? root : (nodes.get(s.parent) ?? root));
  const edges: ElkExtendedEdge[] = [];
  for (const s of chart.states) {
    const container = containerOf(s);
    container.children?.push(nodes.get(s.path) ?? { id: s.path });
    if (s.initial) {
      container.children?.push({ id: `[*]>${s.path}`, width: MARKER, height: MARKER });
      edges.push(edge(`init ${s.path}`, `[*]>${s.path}`, s.path, []));
    }
    if (s.terminal) {
      container.children?.push({ id: `${s.path}>[*]`, width: MARKER, height: MARKER });
      edges.push(edge(`final ${s.path}`, s.path, `${s.path}>[*]`, []));
    }
  }
  // One edge per (source, target) a transition leaves by, carrying each trigger once.
  const pairs = new Map<string, { source: string; target: string; lines: string[] }>();
  for (const t of chart.transitions) {
    if (t.target === null || within(t.target, t.source)) continue;
    const key = `${t.source}>${t.target}`;
    const pair = pairs.get(key) ?? { source: t.source, target: t.target, lines: [] };
    if (!pair.lines.includes(trigger(t))) pair.lines.push(trigger(t));
    pairs.set(key, pair);
  }
  for (const [key, pair] of pairs)
    edges.push(edge(`edge ${key}`, pair.source, pair.target, pair.lines));

  const graph = await new ELK().layout({
    ...root,
    edges,
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'POLYLINE',
      'elk.randomSeed': '1',
      'elk.spacing.nodeNode': '40',
      'elk.spacing.edgeLabel': '6',
      'elk.spacing.edgeNode': '24',
      'elk.layered.spacing.nodeNodeBetweenLayers': '56',
      'elk.layered.spacing.edgeNodeBetweenLayers': '24',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
    },
  });
  return place(chart, graph);
}

/** A node's id as an edge end: a state's path, or `[*]` for an initial or final marker. */
const stateOf = (id: string | undefined) => (id === undefined || id.includes('>') ? '[*]' : id);

/** ELK answers positions relative to each container; the picture wants them absolute. */
function place(chart: Chart, graph: ElkNode): Layout {
  const states = new Map(chart.states.map((s) => [s.path, s]));
  const offsets = new Map<string, { x: number; y: number }>([[graph.id, { x: 0, y: 0 }]]);
  const boxes: Box[] = [];
  const visit = (node: ElkNode, ox: number, oy: number) => {
    for (const child of node.children ?? []) {
      const x = ox + (child.x ?? 0);
      const y = oy + (child.y ?? 0);
      offsets.set(child.id, { x, y });
      const state = states.get(child.id);
      const kind =
        state !== undefined ? 'state' : child.id.startsWith('[*]>') ? 'initial' : 'final';
      boxes.push({
        kind,
        path: state?.path ?? '',
        name: state === undefined ? '' : nameOf(state),
        lines: state === undefined ? [] : stateLines(chart, state.path),
        x: r(x),
        y: r(y),
        width: r(child.width ?? 0),
        height: r(child.height ?? 0),
      });
      visit(child, x, y);
    }
  };
  visit(graph, 0, 0);
  const edges = (graph.edges ?? []).map((e): Edge => {
    const container = (e as { container?: string }).container ?? graph.id;
    const o = offsets.get(container) ?? { x: 0, y: 0 };
    const at = (p: { x: number; y: number }) => ({ x: r(o.x + p.x), y: r(o.y + p.y) });
    const points = (e.sections ?? []).flatMap((s) => [
      s.startPoint,
      ...(s.bendPoints ?? []),
      s.endPoint,
    ]);
    const label = e.labels?.[0];
    return {
      from: stateOf(e.sources[0]),
      to: stateOf(e.targets[0]),
      points: points.map(at),
      label:
        label === undefined
          ? null
          : {
              ...at({ x: label.x ?? 0, y: label.y ?? 0 }),
              width: r(label.width ?? 0),
              height: r(label.height ?? 0),
              lines: (label.text ?? '').split('\n'),
            },
    };
  });
  return { width: r(graph.width ?? 0), height: r(graph.height ?? 0), boxes, edges };
}

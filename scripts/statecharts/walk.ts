/**
 * Reads a machine's own definition (`machine.root`) into a plain chart: its states and
 * every transition with its event, guard, target and actions, in definition order. The
 * generator renders the chart; the machine tests use it to assert that every transition
 * is taken at least once.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/** One state of a chart, named by its dotted path from the root. */
export interface ChartState {
  readonly path: string;
  readonly description: string | null;
  /** The enclosing state's path; null at the top level. */
  readonly parent: string | null;
  /** The initial state of its parent (or of the machine). */
  readonly initial: boolean;
  /** It has states of its own. */
  readonly compound: boolean;
  /** XState `final`, or a leaf that no transition of its own or of an ancestor leaves. */
  readonly terminal: boolean;
}

/** One transition as written in the machine. */
export interface ChartTransition {
  readonly source: string;
  /** The event type, `after <delay>` for a delayed transition, `always` for an eventless one. */
  readonly event: string;
  readonly guard: string | null;
  /** The target state's path; null for a transition that stays (no exit, no entry). */
  readonly target: string | null;
  readonly actions: readonly string[];
  readonly description: string | null;
  /** The machine's own transition object, for coverage checks by identity. */
  readonly definition: AnyTransitionDefinition;
}

/** A machine read for documentation. */
export interface Chart {
  readonly id: string;
  readonly title: string;
  readonly source: string | null;
  readonly invariants: readonly string[];
  readonly states: readonly ChartState[];
  readonly transitions: readonly ChartTransition[];
}

interface ChartMeta {
  readonly title?: unknown;
  readonly source?: unknown;
  readonly invariants?: unknown;
}

/** Reads `machine` into a chart; the root's `meta` supplies title, source and invariants. */
export function walkMachine(machine: AnyStateMachine): Chart {
  const root = machine.root;
  const meta = (root.meta ?? {}) as ChartMeta;
  const nodes = descendants(root);
  const transitions = nodes.flatMap((node) => transitionsOf(node));
  const states = nodes.map((node): ChartState => {
    const path = pathOf(node);
    const leaves = transitions.some(
      (t) => within(path, t.source) && t.target !== null && !within(t.target, path),
    );
    return {
      path,
      description: node.description ?? null,
      parent: node.parent === undefined || node.parent === root ? null : pathOf(node.parent),
      initial: node.parent?.initial.target.includes(node) === true,
      compound: node.type === 'compound' || node.type === 'parallel',
      terminal: node.type === 'final' || (node.type === 'atomic' && !leaves),
    };
  });
  return {
    id: machine.id,
    title: typeof meta.title === 'string' ? meta.title : machine.id,
    source: typeof meta.source === 'string' ? meta.source : null,
    invariants: Array.isArray(meta.invariants) ? meta.invariants.map(String) : [],
    states,
    transitions,
  };
}

/** True when `path` is `ancestor` or lies inside it. */
export function within(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}.`);
}

function descendants(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...descendants(child)]);
}

function pathOf(node: AnyStateNode): string {
  return node.path.join('.');
}

function transitionsOf(node: AnyStateNode): ChartTransition[] {
  const delays = new Map(node.after.map((t) => [t.eventType, t.delay] as const));
  const labelled = [...node.transitions.entries()].map(
    ([eventType, list]) => [eventLabel(eventType, delays.get(eventType)), list] as const,
  );
  const always = node.always ?? [];
  return [...labelled, ['always', always] as const].flatMap(([event, list]) =>
    list.map((definition) => ({
      source: pathOf(node),
      event,
      guard: definition.guard === undefined ? null : guardLabel(definition.guard),
      target: targetOf(definition),
      actions: definition.actions.map(actionLabel),
      description: definition.description ?? null,
      definition,
    })),
  );
}

function eventLabel(eventType: string, delay: unknown): string {
  if (delay !== undefined) {
    return `after ${typeof delay === 'string' || typeof delay === 'number' ? String(delay) : 'delay'}`;
  }
  const done = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  return done ? `${done[1] === 'done' ? 'done' : 'error'}: ${done[2] ?? ''}` : eventType;
}

function targetOf(definition: AnyTransitionDefinition): string | null {
  const targets = definition.target ?? [];
  if (targets.length === 0) {
    return null;
  }
  return targets.map(pathOf).join(', ');
}

/** `isOwner`, `not(isOwner)`, `and(a, b)`; an inline predicate reads as `inline`. */
export function guardLabel(guard: unknown): string {
  if (typeof guard === 'string') {
    return guard;
  }
  if (typeof guard === 'function') {
    const { guards: inner, stateValue } = guard as { guards?: unknown; stateValue?: unknown };
    if (Array.isArray(inner)) return `${guard.name}(${inner.map(guardLabel).join(', ')})`;
    if (typeof stateValue === 'string') return `in(${stateValue.replace(/^#[^.]+\./, '')})`;
    return 'inline';
  }
  // A named guard with fixed parameters reads like a named action: `isPhase(idle)`.
  return actionLabel(guard);
}

/** `name`, `name(value)` for fixed parameters, `name(…)` for parameters computed per event. */
export function actionLabel(action: unknown): string {
  if (typeof action === 'string') {
    return action;
  }
  if (typeof action === 'object' && action !== null && 'type' in action) {
    const params = (action as { params?: unknown }).params;
    const name = String(action.type);
    if (params === undefined) {
      return name;
    }
    if (typeof params === 'function') {
      return `${name}(…)`;
    }
    const values = Object.values(params as Record<string, unknown>).map((v) => JSON.stringify(v));
    return `${name}(${values.join(', ').replaceAll('"', '')})`;
  }
  if (typeof action === 'function') {
    const type = (action as { type?: unknown }).type;
    return typeof type === 'string' ? type : action.name || 'inline';
  }
  return 'inline';
}

/**
 * A name for a transition that survives `machine.provide()` (which rebuilds the nodes):
 * source path, event type and position among the source's transitions for that event.
 */
export function transitionKey(definition: AnyTransitionDefinition): string {
  const source: AnyStateNode = definition.source;
  const eventType = String(definition.eventType);
  const list = source.transitions.get(eventType) ?? source.always ?? [];
  return `${pathOf(source)} ${eventType} #${list.indexOf(definition)}`;
}

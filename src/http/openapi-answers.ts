/** Answer examples (filled below). */
export const ANSWER_EXAMPLES: Readonly<Record<string, unknown>> = {};
export const INLINE_EXAMPLES: Readonly<Record<string, unknown>> = {};
export const PROBLEM_EXAMPLES: Readonly<Record<string, unknown>> = {};

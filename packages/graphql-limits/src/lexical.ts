import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';

/**
 * A look at a query text before it is parsed (tokens, bracket nesting, directives). graphql-js's parser is recursive and builds a node per
 * token, so a huge text or a deeply bracketed one (`{a{a{a...`) costs memory and stack before any
 * limit on the parsed document could apply. The lexer is iterative: it counts tokens and bracket
 * nesting and stops at the first one over its bound, so this look costs at most `maxTokens` tokens.
 */

export interface LexicalBounds {
  /** Tokens the text may hold (punctuation, names, values; comments and commas are not tokens). */
  readonly maxTokens: number;
  /** Bracket nesting (`{`, `(`, `[`) the text may reach. */
  readonly maxNesting: number;
  /** Directives (`@name`) the text may hold. */
  readonly maxDirectives: number;
}

export type LexicalVerdict =
  | { readonly ok: true; readonly tokens: number; readonly nesting: number; readonly directives: number }
  | { readonly ok: false; readonly limit: 'tokens' | 'nesting' | 'directives'; readonly measured: number }
  /** Not even valid tokens: left to the parser, which says where. */
  | { readonly ok: false; readonly limit: 'syntax'; readonly message: string };

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R]);

export function scanQueryText(text: string, bounds: LexicalBounds): LexicalVerdict {
  const lexer = new Lexer(new Source(text));
  let tokens = 0;
  let depth = 0;
  let nesting = 0;
  let directives = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      tokens += 1;
      if (tokens > bounds.maxTokens) return { ok: false, limit: 'tokens', measured: tokens };
      if (OPENING.has(token.kind)) {
        depth += 1;
        if (depth > nesting) nesting = depth;
        if (depth > bounds.maxNesting) return { ok: false, limit: 'nesting', measured: depth };
      } else if (CLOSING.has(token.kind)) depth -= 1;
      else if (token.kind === TokenKind.AT) {
        directives += 1;
        if (directives > bounds.maxDirectives)
          return { ok: false, limit: 'directives', measured: directives };
      }
    }
  } catch (error) {
    if (error instanceof GraphQLError) return { ok: false, limit: 'syntax', message: error.message };
    throw error;
  }
  return { ok: true, tokens, nesting, directives };
}

/**
 * Turns schema validation errors (Ajv, as Fastify reports them) into the array of readable messages
 * the NestJS-style error body carries: `["name should not be empty", "cover must be an http(s) URL"]`.
 */

/** The fields of an Ajv error this module reads. */
export interface SchemaIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Fields the server sets itself; sending them is refused with a message saying so. */
const SERVER_FIELDS = new Set(['eventId', 'createdAt', 'createdBy', 'updatedAt']);

const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'must be a full ISO 8601 date-time with a time zone, e.g. 2026-05-01T18:30:00Z',
  uri: 'must be an absolute http(s) URL',
  'list-cursor': 'must be a cursor taken from a Link header of GET /events',
};

/** At most this many messages per answer, then one saying how many more (bounds the error body). */
export const MAX_MESSAGES = 20;
/** Names echoed from the request (unknown properties) are cut to this many characters. */
const MAX_NAME_LENGTH = 64;

function shorten(name: string): string {
  return name.length <= MAX_NAME_LENGTH ? name : `${name.slice(0, MAX_NAME_LENGTH)}…`;
}

function fieldOf(instancePath: string, context: string): string {
  const path = instancePath
    .split('/')
    .filter((part) => part.length > 0)
    .join('.');
  return path.length > 0 ? shorten(path) : context;
}

function describe(issue: SchemaIssue, context: string): string {
  const field = fieldOf(issue.instancePath, context);
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return `${String(p.missingProperty)} is required`;
    case 'additionalProperties': {
      const name = shorten(String(p.additionalProperty));
      return SERVER_FIELDS.has(name)
        ? `${name} is set by the server and must not be sent`
        : `property ${name} should not exist`;
    }
    case 'minLength':
      return p.limit === 1
        ? `${field} should not be empty`
        : `${field} must be at least ${p.limit} characters`;
    case 'maxLength':
      return `${field} must be at most ${p.limit} characters`;
    case 'format':
      return `${field} ${FORMAT_MESSAGES[String(p.format)] ?? `must be a valid ${String(p.format)}`}`;
    case 'enum':
      return `${field} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      if (issue.instancePath === '' && context === 'body') return 'the request body must be a JSON object';
      return `${field} must be ${p.type === 'integer' ? 'an integer' : `a ${String(p.type)}`}`;
    case 'minimum':
      return `${field} must not be less than ${p.limit}`;
    case 'maximum':
      return `${field} must not be greater than ${p.limit}`;
    case 'pattern':
      return field === 'eventId'
        ? 'eventId must be 1-64 characters of A-Z a-z 0-9 . _ ~ - (and not "." or "..")'
        : `${field} has an invalid format`;
    default:
      return `${field} ${issue.message ?? 'is invalid'}`;
  }
}

/**
 * One message per issue, duplicates removed, in the order the validator found them; at most
 * `MAX_MESSAGES`, then `...and N more problems`.
 */
export function validationMessages(issues: readonly SchemaIssue[], context: string): string[] {
  const messages = [...new Set(issues.map((issue) => describe(issue, context)))];
  if (messages.length <= MAX_MESSAGES) return messages;
  const rest = messages.length - MAX_MESSAGES;
  return [...messages.slice(0, MAX_MESSAGES), `...and ${rest} more problems`];
}

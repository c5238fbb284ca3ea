/**
 * Adds a field to `Vary` (RFC 9110 section 12.5.5) without dropping the ones set earlier: the CORS
 * hook may already have said `Origin` when a route adds `Authorization`.
 */
import type { FastifyReply } from 'fastify';

export function varyOn(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  const fields = typeof current === 'string' && current.length > 0 ? current.split(/\s*,\s*/) : [];
  if (!fields.some((name) => name.toLowerCase() === field.toLowerCase())) fields.push(field);
  reply.header('vary', fields.join(', '));
}

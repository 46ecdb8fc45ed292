/** The API key of SDK and agent requests: `Authorization: Bearer sk_...`. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  const match = header === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The API key of SDK and agent requests: `Authorization: Bearer sk_...`. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get('authorization');
  // Stryker disable next-line ConditionalExpression,Regex: exec(null) tests the text 'null', which never matches; header values arrive trimmed, so nothing trails the token
  const match = header === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** A real HTTP receiver on loopback for webhook tests: records each request and answers what the test scripts. */
export interface Received {
  body: string;
  headers: Headers;
  path: string;
}

export function webhookReceiver(answer: (request: Request, index: number) => Response | Promise<Response> = () => new Response(null, { status: 204 })) {
  const received: Received[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const index = received.length;
      received.push({ body: await request.text(), headers: request.headers, path: new URL(request.url).pathname });
      return answer(request, index);
    },
  });
  return { url: (path = '/hook') => `http://127.0.0.1:${server.port}${path}`, port: server.port, received, stop: () => server.stop(true) };
}

export function hmacHex(secret: string, body: string): string {
  return new Bun.CryptoHasher('sha256', secret).update(body).digest('hex');
}

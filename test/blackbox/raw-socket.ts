/**
 * Raw HTTP/1.1 over a TCP socket, for requests `fetch` will not send: malformed headers,
 * bodies that trickle in or never arrive, sockets held open.
 */
import { connect, type Socket } from 'node:net';

/** Sends `text` and collects what comes back until the server closes or `waitMs` passes. */
export function rawExchange(port: number, text: string | Uint8Array, waitMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', done);
    socket.on('close', done);
  });
}

/** An open socket that has sent `head` and records whatever the server answers. */
export interface HeldSocket {
  socket: Socket;
  answer(): string;
  closed: Promise<void>;
}

export function holdSocket(port: number, head: string): Promise<HeldSocket> {
  return new Promise((resolve, reject) => {
    let answer = '';
    let markClosed!: () => void;
    const closed = new Promise<void>((resolveClosed) => (markClosed = resolveClosed));
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      resolve({ socket, answer: () => answer, closed });
    });
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', (error) => {
      markClosed();
      reject(error);
    });
    socket.on('close', () => markClosed());
  });
}

/** The status code of a raw HTTP answer, or null when none arrived. */
export function statusOf(answer: string): number | null {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
  return match === null ? null : Number(match[1]);
}

/** The body of a raw HTTP answer with Content-Length (what our JSON answers use). */
export function bodyOf(answer: string): string {
  const split = answer.indexOf('\r\n\r\n');
  return split === -1 ? '' : answer.slice(split + 4);
}

import { createServer, request, type Server } from "node:http";
import { connect, type Socket } from "node:net";

/**
 * What oauth2-proxy does for the CLI, in front of the real ingest-api and stream-relay on
 * one address: a request (or WebSocket upgrade) carrying the session cookie is passed on,
 * any other is answered 401. Upgrades go to the relay, everything else to the API.
 */
export interface CookieProxy {
  url: string;
  wsUrl: string;
  close(): Promise<void>;
}

export async function startCookieProxy(options: {
  apiUrl: string;
  wsUrl: string;
  cookie: string;
}): Promise<CookieProxy> {
  const api = new URL(options.apiUrl);
  const relay = new URL(options.wsUrl);
  const signedIn = (header: string | undefined) =>
    (header ?? "").split(/;\s*/).includes(options.cookie);
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (!signedIn(req.headers.cookie)) {
      res.writeHead(401, { "content-type": "text/plain" }).end("Unauthorized");
      return;
    }
    const upstream = request(
      {
        host: api.hostname,
        port: api.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req, socket, head) => {
    if (!signedIn(req.headers.cookie)) {
      socket.end(
        "HTTP/1.1 401 Unauthorized\r\ncontent-length: 12\r\nconnection: close\r\n\r\nUnauthorized",
      );
      return;
    }
    const upstream = connect(Number(relay.port), relay.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no proxy port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    wsUrl: `ws://127.0.0.1:${address.port}${relay.pathname}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}

import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback webhook receiver (node:http): records each request; answers `status` (default 200). */
export interface WebhookReceiver {
  url: string;
  requests: { headers: IncomingHttpHeaders; body: string }[];
  status: number;
  next(): Promise<{ headers: IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const waiters: ((r: { headers: IncomingHttpHeaders; body: string }) => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      receiver.requests.push(request);
      for (const w of waiters.splice(0)) w(request);
      res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    requests: [],
    status: 200,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

import { RUNNING_SESSION_STATUSES, type SessionListQuery } from "@tarsy/contracts";
import type { AlertSession, Prisma, PrismaClient } from "@tarsy/db";
import type { ChatRow, StageRow } from "./present.ts";

/**
 * Read queries the API needs beyond packages/db's data-access functions (sorting, detail
 * with relations, filter options).
 */

const SORT_COLUMNS = {
  created_at: "createdAt",
  started_at: "startedAt",
  completed_at: "completedAt",
  status: "status",
  alert_type: "alertType",
} as const;

export async function querySessions(
  prisma: PrismaClient,
  q: SessionListQuery,
): Promise<{ items: AlertSession[]; total: number }> {
  const where: Prisma.AlertSessionWhereInput = {
    deletedAt: null,
    ...(q.status ? { status: { in: q.status } } : {}),
    ...(q.alert_type ? { alertType: q.alert_type } : {}),
    ...(q.chain_id ? { chainId: q.chain_id } : {}),
    ...(q.from || q.to
      ? {
          createdAt: {
            ...(q.from ? { gte: new Date(q.from) } : {}),
            ...(q.to ? { lte: new Date(q.to) } : {}),
          },
        }
      : {}),
    ...(q.search
      ? {
          OR: [
            { alertData: { contains: q.search, mode: "insensitive" } },
            { finalAnalysis: { contains: q.search, mode: "insensitive" } },
            { executiveSummary: { contains: q.search, mode: "insensitive" } },
          ],
        }
      : {}),
  };
  const column = SORT_COLUMNS[q.sort_by];
  const nullable = column === "startedAt" || column === "completedAt";
  const [items, total] = await Promise.all([
    prisma.alertSession.findMany({
      where,
      orderBy: [
        { [column]: nullable ? { sort: q.sort_order, nulls: "last" } : q.sort_order },
        { createdAt: "desc" },
        { id: "desc" },
      ] as Prisma.AlertSessionOrderByWithRelationInput[],
      skip: (q.page - 1) * q.page_size,
      take: q.page_size,
    }),
    prisma.alertSession.count({ where }),
  ]);
  return { items, total };
}

export async function queryActiveSessions(prisma: PrismaClient) {
  const [active, queued] = await Promise.all([
    prisma.alertSession.findMany({
      where: { deletedAt: null, status: { in: [...RUNNING_SESSION_STATUSES] } },
      orderBy: [{ startedAt: "asc" }, { createdAt: "asc" }],
    }),
    prisma.alertSession.findMany({
      where: { deletedAt: null, status: "pending" },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
  ]);
  return { active, queued };
}

export async function querySessionDetail(
  prisma: PrismaClient,
  id: string,
): Promise<{ session: AlertSession; stages: StageRow[]; chat: ChatRow | null } | null> {
  const session = await prisma.alertSession.findFirst({
    where: { id, deletedAt: null },
    include: {
      stages: {
        orderBy: { stageIndex: "asc" },
        include: { executions: { orderBy: { agentIndex: "asc" } } },
      },
      chat: {
        include: {
          messages: { orderBy: { createdAt: "asc" }, include: { stage: { select: { id: true } } } },
        },
      },
    },
  });
  if (session === null) return null;
  const { stages, chat, ...row } = session;
  return { session: row, stages, chat };
}

export async function queryFilterOptions(prisma: PrismaClient) {
  const [types, chains] = await Promise.all([
    prisma.alertSession.findMany({
      where: { deletedAt: null },
      distinct: ["alertType"],
      select: { alertType: true },
      orderBy: { alertType: "asc" },
    }),
    prisma.alertSession.findMany({
      where: { deletedAt: null },
      distinct: ["chainId"],
      select: { chainId: true },
      orderBy: { chainId: "asc" },
    }),
  ]);
  return { alertTypes: types.map((t) => t.alertType), chainIds: chains.map((c) => c.chainId) };
}

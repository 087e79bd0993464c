/**
 * Where ELK put each part of the chart, flat: each box (states and initial-state dots) and each
 * edge with its points and label, in absolute coordinates. The page makes it from ELK's answer
 * and draws from it; the inspector keeps it between page loads (routes/layouts.ts), so this is
 * also what the page sends and gets back, checked by this schema.
 */
import * as z from 'zod';

/** The most boxes, edges and points a kept layout may hold: far above any chart, and a bound on what a request can make the server store. */
const MAX_PARTS = 5_000;
const MAX_ID = 1_000;

const Coordinate = z.number().finite();
const Point = z.object({ x: Coordinate, y: Coordinate });

export const Placement = z.object({
  width: Coordinate,
  height: Coordinate,
  boxes: z.array(z.object({ id: z.string().max(MAX_ID), x: Coordinate, y: Coordinate, width: Coordinate, height: Coordinate })).max(MAX_PARTS),
  edges: z
    .array(
      z.object({
        id: z.string().max(MAX_ID),
        source: z.string().max(MAX_ID),
        target: z.string().max(MAX_ID),
        points: z.array(Point).max(MAX_PARTS),
        label: z.object({ text: z.string().max(MAX_ID), x: Coordinate, y: Coordinate, width: Coordinate, height: Coordinate }).optional(),
      }),
    )
    .max(MAX_PARTS),
});
export type Placement = z.infer<typeof Placement>;

/// <reference lib="dom" />
/**
 * Where the statechart drawing is looked at: its scale and the scroll position of the box
 * around it. The chart is several times wider than the page's middle column (docs/design.md
 * has the sizes), so two views matter: the readable one — shrunk at most down to the scale
 * where the smallest text is still MIN_TEXT_PX high, the active state in the middle — which
 * a live session opens in and a step keeps; and the whole chart ("fit"),
 * an overview whose text is too small to read, which a finished session opens in (its
 * active state, the final one, says nothing on its own). "find active" zooms in on the
 * active state. Scrolling is set on the box itself (never `scrollIntoView`, which would
 * scroll the page).
 */

/** A rectangle in layout coordinates (the SVG's viewBox). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The smallest text height, in CSS pixels, that "fit" and "find active" keep. */
export const MIN_TEXT_PX = 10;
/** "find active" shows the state at about this share of the visible width (or height)... */
const FOCUS_SHARE = 1 / 3;
/** ...but zooms in no further than this. */
const FOCUS_MAX_SCALE = 2;
/** The − and + buttons' range: zooming out by hand may go below the readable scale. */
const ZOOM_RANGE = [0.1, 3] as const;

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** How the drawing is placed: the whole chart, readable around the active state, or as the person zoomed it (a resize keeps the first two). */
export type ViewportMode = 'whole' | 'readable' | 'manual';

export class DiagramViewport {
  /** Drawing pixels per layout pixel. */
  scale = 1;
  mode: ViewportMode = 'readable';
  /** The scale at which the smallest text of the drawing is MIN_TEXT_PX high. */
  readonly readableScale: number;

  /**
   * @param scroller the scrolling box around the SVG
   * @param smallestFontPx the smallest font size among the drawing's texts, at scale 1
   *
   * @example
   * const viewport = new DiagramViewport(box, svg, { width: 1758, height: 1757 }, 10);
   * viewport.readable(activeBox); // readable, the active state in the middle
   * viewport.fit(); // the whole chart
   */
  constructor(
    private readonly scroller: HTMLElement,
    private readonly svg: SVGSVGElement,
    private readonly size: { width: number; height: number },
    smallestFontPx: number,
  ) {
    this.readableScale = MIN_TEXT_PX / smallestFontPx;
  }

  /** The whole chart in the box, never larger than 1:1, however small its text gets. */
  fit(): void {
    const { width, height } = this.available();
    this.setScale(Math.min(1, width / this.size.width, height / this.size.height));
    this.mode = 'whole';
    this.scroller.scrollLeft = 0;
    this.scroller.scrollTop = 0;
  }

  /** The whole width if it fits (never larger than 1:1), else the readable scale; `active` in the middle. */
  readable(active: Box | null): void {
    this.setScale(Math.max(this.readableScale, Math.min(1, this.available().width / this.size.width)));
    this.mode = 'readable';
    if (active) this.centre(active);
  }

  /** Zooms in on `box` (about a third of the visible area, readable at least), centred. */
  focus(box: Box): void {
    const share = Math.min((this.scroller.clientWidth * FOCUS_SHARE) / box.width, (this.scroller.clientHeight * FOCUS_SHARE) / box.height);
    this.setScale(clamp(share, this.readableScale, Math.max(this.readableScale, FOCUS_MAX_SCALE)));
    this.mode = 'manual';
    this.centre(box);
  }

  /** The − and + buttons: keeps the point in the middle of the box where it is. */
  zoom(factor: number): void {
    const middle = {
      x: (this.scroller.scrollLeft + this.scroller.clientWidth / 2) / this.scale,
      y: (this.scroller.scrollTop + this.scroller.clientHeight / 2) / this.scale,
    };
    this.setScale(clamp(this.scale * factor, ...ZOOM_RANGE));
    this.mode = 'manual';
    this.centre({ ...middle, width: 0, height: 0 });
  }

  /** Scrolls `box` into the middle unless it is already wholly visible. */
  keepInView(box: Box): void {
    const { scrollLeft, scrollTop, clientWidth, clientHeight } = this.scroller;
    const inside =
      box.x * this.scale >= scrollLeft &&
      box.y * this.scale >= scrollTop &&
      (box.x + box.width) * this.scale <= scrollLeft + clientWidth &&
      (box.y + box.height) * this.scale <= scrollTop + clientHeight;
    if (!inside) this.centre(box);
  }

  /**
   * The room for the drawing: the box's width, and the height it may grow to (its max-height,
   * not its current height, which follows the drawing's and would shrink the next fit).
   */
  private available(): { width: number; height: number } {
    const limit = parseFloat(getComputedStyle(this.scroller).maxHeight);
    const height = Number.isFinite(limit) ? limit : this.scroller.clientHeight;
    // The box's padding (2 px a side) and a pixel for rounding: no scroll bar at the fit.
    return { width: Math.max(200, this.scroller.clientWidth - 5), height: Math.max(150, height - 5) };
  }

  private centre(box: Box): void {
    this.scroller.scrollLeft = (box.x + box.width / 2) * this.scale - this.scroller.clientWidth / 2;
    this.scroller.scrollTop = (box.y + box.height / 2) * this.scale - this.scroller.clientHeight / 2;
  }

  private setScale(scale: number): void {
    this.scale = scale;
    this.svg.setAttribute('width', String(Math.round(this.size.width * scale)));
    this.svg.setAttribute('height', String(Math.round(this.size.height * scale)));
  }
}

/**
 * The anchors GitHub gives a Markdown file's headings (lower case, punctuation but `-` and `_`
 * dropped, spaces to `-`; a repeated heading gets `-1`, `-2`…), so a runbook_url can be checked
 * against docs/runbooks.md. Headings inside fenced code are not headings.
 */
export function githubAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = (m[1] as string)
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.push(n ? `${base}-${n}` : base);
  }
  return anchors;
}

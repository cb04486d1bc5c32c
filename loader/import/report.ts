import type { ImportReport } from './importer.js';

/** The summary an operator reads after an import: counts, then each rejected line and why. */
export function formatImportReport(report: ImportReport): string {
  const rejected = report.rejected.length + (report.rejectedUnlisted ?? 0);
  const skipped = report.skipped ? `, skipped ${report.skipped} (not catalogued)` : '';
  const lines = [
    `${report.source}: read ${report.read} rows; imported ${report.imported} (${report.inserted} new, ${report.updated} updated, ${report.unchanged} unchanged), repaired ${report.repaired}, rejected ${rejected}${skipped}`,
  ];
  for (const problem of report.rejected) lines.push(`  line ${problem.line}: ${problem.reason}`);
  if (report.rejectedUnlisted) lines.push(`  and ${report.rejectedUnlisted} more rejected lines not listed`);
  return lines.join('\n');
}

/** What the report says, as fields of a JSON log line: the counts, rejected lines counted rather than listed. */
export function importSummary(report: ImportReport): Omit<ImportReport, 'rejected' | 'rejectedUnlisted'> & { rejected: number } {
  const { rejected, rejectedUnlisted, ...counts } = report;
  return { ...counts, rejected: rejected.length + (rejectedUnlisted ?? 0) };
}

import type { ImportReport } from './importer.js';

/** The summary an operator reads after an import: counts, then each rejected line and why. */
export function formatImportReport(report: ImportReport): string {
  const lines = [
    `${report.source}: read ${report.read} rows; imported ${report.imported} (${report.inserted} new, ${report.updated} updated, ${report.unchanged} unchanged), repaired ${report.repaired}, rejected ${report.rejected.length}`,
  ];
  for (const problem of report.rejected) lines.push(`  line ${problem.line}: ${problem.reason}`);
  return lines.join('\n');
}

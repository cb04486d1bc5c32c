// The part of parse-prometheus-text-format the tests use (the package ships no types).
declare module 'parse-prometheus-text-format' {
  export interface ParsedSample {
    value?: string;
    labels?: Record<string, string>;
  }
  export interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}

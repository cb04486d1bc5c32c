import { parentPort } from 'node:worker_threads';
import { stageLines, type StageJob } from './stage.js';

/** A worker thread of StagePool: stages each chunk of lines it is sent, in order. */
parentPort!.on('message', (job: StageJob) => parentPort!.postMessage(stageLines(job)));

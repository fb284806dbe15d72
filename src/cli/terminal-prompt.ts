/**
 * Questions on the user's terminal (`node drain`'s confirmation, `job restart -batch-wait ask`).
 * Only asked when stdin is a terminal; the callers decide what a missing terminal means.
 */
import { createInterface } from 'node:readline';

/** True when the user can be asked: stdin is a terminal. */
export function canAsk(): boolean {
  return Boolean(process.stdin.isTTY);
}

/** Asks `question` and resolves with the answer line; null when the user pressed Ctrl-C or closed input. */
export function askLine(question: string): Promise<string | null> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  return new Promise<string | null>((resolve) => {
    let answered = false;
    let answerText = '';
    rl.once('SIGINT', () => rl.close());
    rl.once('close', () => {
      if (!answered) process.stdout.write('\n');
      resolve(answered ? answerText : null);
    });
    rl.question(`${question} `, (answer) => {
      answered = true;
      answerText = answer;
      rl.close();
    });
  });
}

/** Runs `read` at once when asked, unless a read is under way: then once more when that one
 *  ends, however often it was asked meanwhile. A change is read as soon as it arrives (no
 *  waiting to see whether more follow), and a burst of changes costs at most two reads. */
export function coalesced(read: () => Promise<unknown>): () => void {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void read()
      .catch(() => {})
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}

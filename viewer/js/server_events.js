/* The server's events for this tab: through the stream all tabs share (events_worker.js, a
   SharedWorker), or, in a browser without SharedWorker, a stream of this tab's own. */

/** Call `onEvent(event)` for each event of the server (an object with a `trace`). */
export function listenToServer(onEvent) {
  const deliver = (data) => {
    if (data && typeof data === 'object' && typeof data.trace === 'string') onEvent(data);
  };
  if (typeof SharedWorker === 'function') {
    try {
      const worker = new SharedWorker(new URL('./events_worker.js', import.meta.url).href, { name: 'cs336-lectures-events' });
      worker.port.addEventListener('message', (message) => deliver(message.data));
      worker.port.start();
      window.addEventListener('pagehide', (event) => {
        if (!event.persisted) worker.port.postMessage('bye');
      });
      return;
    } catch {
      // Refused (some privacy modes): a stream of this tab's own.
    }
  }
  const events = new EventSource('api/events');
  events.addEventListener('message', (message) => {
    try {
      deliver(JSON.parse(message.data));
    } catch {
      /* not an event */
    }
  });
}

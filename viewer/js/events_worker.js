/* The one stream of the server's events (api/events) that all tabs of a browser share, as a
   SharedWorker (server_events.js starts it). Browsers open at most six connections to one host
   over HTTP/1.1, and an event stream holds its connection for good: with a stream per tab, the
   seventh tab of a served lecture would never load.

   Each tab's port gets every event; a tab that joins later first gets the last event of each
   trace marked `replay` (what a stream of its own would have begun with). Events the server
   does not replay (state "source": a lecture file changed) are passed on, never kept. */

const stream = new EventSource(new URL('../api/events', self.location.href).href);
const ports = new Set();
const latest = new Map(); // trace -> its last event, for tabs that join later

stream.addEventListener('message', (message) => {
  let event;
  try {
    event = JSON.parse(message.data);
  } catch {
    return;
  }
  if (!event || typeof event.trace !== 'string') return;
  const previous = latest.get(event.trace);
  // As the server keeps them: a whole run's check is added to the run it checked.
  if (event.state === 'verified' && previous) latest.set(event.trace, { ...previous, verification: event.verification });
  else if (event.state !== 'source') latest.set(event.trace, event);
  for (const port of ports) port.postMessage(event);
});

self.addEventListener('connect', (connection) => {
  const port = connection.ports[0];
  ports.add(port);
  port.addEventListener('message', (message) => {
    if (message.data === 'bye') ports.delete(port); // the tab is going away
  });
  port.start();
  for (const event of latest.values()) port.postMessage({ ...event, replay: true });
});

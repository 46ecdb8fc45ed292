/**
 * The event stream in words: OpenAPI 3.1 has no way to type the messages of a
 * `text/event-stream`, so their `data` schemas are named components (StreamJob,
 * StreamWorker, StreamQueue, StreamCommand) and this text says which event carries which.
 */
export const STREAM_DESCRIPTION = `Server-Sent Events of the user's connections (or of \`connectionId\`), as they change.

| Event | \`data\` (one line of JSON) |
|---|---|
| \`job\` | the job list item after the change (schema \`StreamJob\`) |
| \`worker\` | the worker (schema \`StreamWorker\`), also when it goes \`offline\` after 6 s without a heartbeat |
| \`queue\` | the queue without metrics (schema \`StreamQueue\`) |
| \`command\` | a command sent to the agent, when it is made and when its outcome arrives (schema \`StreamCommand\`) |
| \`reset\` | \`{}\`: events were lost (the resume id fell out of the buffer, or the service restarted); refetch everything |

The first message is \`retry: 3000\`. Every event has a monotonic ULID \`id:\`; a \`: keep-alive\` comment comes every 15 s.
Resume with the \`Last-Event-ID\` header, or \`lastEventId\` on a first connect (EventSource cannot set headers).
At most STREAMS_PER_USER_MAX streams per user (429 \`RATE_LIMITED\` beyond). A client more than 8 MiB behind is disconnected and resumes.
A stream covers the connections the user owned when it opened.`;

using System.Net.WebSockets;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.WebSockets;

namespace Jackdaw.Server.Replication;

/// <summary>
/// Pushes one database's etag feed to one other node, over a WebSocket to its
/// <c>/databases/{db}/replication/push</c>: asks its position first, then sends batches from there,
/// one at a time, each acknowledged once it is durable there (see <see cref="IncomingReplication"/>).
/// Items the destination holds for certain (its own writes, or what its last Hello or Ack vouches
/// for: <see cref="DestinationKnowledge"/>) are left out of the batches (counted in <see cref="ItemsLeftOut"/>); the batch's last etag
/// still moves the destination's position past them.
/// When the destination is down, the connection drops or a batch is refused, it tries again after
/// a back-off that doubles from <see cref="FirstRetryDelay"/> to <see cref="MaxRetryDelay"/> (reset
/// only by an acknowledged batch), and resumes from the
/// position the destination gives: nothing is skipped, nothing applied twice.
/// </summary>
public sealed class OutgoingReplication : IAsyncDisposable
{
    public static readonly TimeSpan FirstRetryDelay = TimeSpan.FromMilliseconds(100);
    public static readonly TimeSpan MaxRetryDelay = TimeSpan.FromSeconds(5);

    /// <summary>How long the sender waits for new changes before a heartbeat batch (which also finds a dead connection).</summary>
    public static readonly TimeSpan Heartbeat = TimeSpan.FromSeconds(10);

    /// <summary>How long a batch may take to be acknowledged before the connection is given up.</summary>
    public static readonly TimeSpan AckTimeout = TimeSpan.FromSeconds(60);

    public const int MaxItemsPerBatch = 1024;
    public const long MaxBytesPerBatch = 4 * 1024 * 1024;

    /// <summary>
    /// How many items left out (see the type) one batch may pass before it is sent, even empty:
    /// when everything read is left out, further reads go into the same batch up to this many.
    /// </summary>
    public const int MaxLeftOutPerBatch = 16 * MaxItemsPerBatch;

    private readonly Func<DatabasesLandlord> _databases;
    private readonly Action _progress;
    private readonly Action<ClientWebSocketOptions>? _configureSocket;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _run;
    private long _acknowledged = -1;
    private long _acknowledgedRevision = -1;
    private long _leftOut;

    /// <summary>Set when the destination refused a batch for a content it lacked: the next batch carries every content (see <see cref="MissingAttachmentsException"/>).</summary>
    private bool _sendAllContents;

    internal OutgoingReplication(string database, string myTag, ReplicationNode destination, Func<DatabasesLandlord> databases, Action progress, Action<ClientWebSocketOptions>? configureSocket, ILogger logger)
    {
        _configureSocket = configureSocket;
        Database = database;
        MyTag = myTag;
        Destination = destination;
        _databases = databases;
        _progress = progress;
        _logger = logger;
        _run = Task.Run(RunAsync);
    }

    public string Database { get; }

    public string MyTag { get; }

    public ReplicationNode Destination { get; }

    /// <summary>The etag of this node's feed the destination holds everything up to; -1 until it first answered.</summary>
    public long AcknowledgedEtag => Interlocked.Read(ref _acknowledged);

    /// <summary>The revision etag of this node's revisions feed (revisions and revision tombstones) the destination holds everything up to; -1 until it first answered.</summary>
    public long AcknowledgedRevisionEtag => Interlocked.Read(ref _acknowledgedRevision);

    /// <summary>The destination copy's database id, from its first Hello; null until then.</summary>
    public string? DestinationDatabaseId { get; private set; }

    /// <summary>Whether a connection is open now.</summary>
    public bool Connected { get; private set; }

    /// <summary>Why the last connection failed; null while connected.</summary>
    public string? LastError { get; private set; }

    /// <summary>Connections that failed (refused, dropped, a batch not applied) since the last acknowledged batch.</summary>
    public int Failures { get; private set; }

    /// <summary>Items not sent because the destination held them for certain (acknowledged batches only), since this sender started.</summary>
    public long ItemsLeftOut => Interlocked.Read(ref _leftOut);

    /// <summary>Batches sent and acknowledged since this sender started.</summary>
    public long BatchesSent { get; private set; }

    private async Task RunAsync()
    {
        var delay = FirstRetryDelay;
        var token = _stop.Token;
        while (!token.IsCancellationRequested)
        {
            try
            {
                var database = _databases().GetDatabase(Database);
                await PushAsync(database, () => delay = FirstRetryDelay, token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e)
            {
                _sendAllContents |= e is MissingAttachmentsException;
                Connected = false;
                Failures++;
                if (LastError != e.Message)
                {
                    _logger.LogInformation("Replication of {Database} to {Tag} ({Url}): {Error}; retrying", Database, Destination.Tag, Destination.Url, e.Message);
                }
                LastError = e.Message;
            }
            try
            {
                await Task.Delay(delay, token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, MaxRetryDelay.Ticks));
        }
    }

    private async Task PushAsync(DocumentDatabase database, Action acknowledged, CancellationToken token)
    {
        using var socket = new ClientWebSocket();
        socket.Options.KeepAliveInterval = TimeSpan.FromSeconds(15);
        _configureSocket?.Invoke(socket.Options);
        await socket.ConnectAsync(PushUri(database), token).ConfigureAwait(false);
        using var messages = new WebSocketMessageReader(socket, 64 * 1024);
        var (position, vouched, hello) = await ReadHelloAsync(messages, token).ConfigureAwait(false);
        var revisionPosition = hello.LastRevisionEtag;
        Interlocked.Exchange(ref _acknowledgedRevision, revisionPosition);
        // The contents this connection sent: the destination holds them (until it releases them:
        // a batch that then needs one is refused, and the next carries every content).
        var sentContents = new HashSet<string>(StringComparer.Ordinal);
        if (!string.Equals(hello.NodeTag, Destination.Tag, StringComparison.OrdinalIgnoreCase))
        {
            throw new InvalidDataException($"The node at {Destination.Url} is node {hello.NodeTag ?? "(none)"}, not {Destination.Tag}: check the topology's URLs.");
        }
        if (DestinationDatabaseId is { } known && known != hello.DatabaseId)
        {
            throw new InvalidDataException($"Node {Destination.Tag}'s copy of {Database} is now database id {hello.DatabaseId}, not {known}: the database was recreated there; replication to it stops until the topology is set again.");
        }
        DestinationDatabaseId = hello.DatabaseId;
        Acknowledge(position);
        Connected = true;
        LastError = null;

        var holds = DestinationKnowledge.Of(hello.DatabaseId, vouched);
        Func<string, bool> leaveOut = changeVector => holds.Covers(changeVector);
        while (true)
        {
            ReplicationBatch batch;
            var leftOut = 0;
            using (var reader = database.BeginRead())
            {
                if (sentContents.Count > 100_000)
                {
                    sentContents.Clear();
                }
                var from = position;
                while (true)
                {
                    batch = ReplicationFeed.Read(reader, from, revisionPosition, sentContents, _sendAllContents, MaxItemsPerBatch, MaxBytesPerBatch, holds.IsEmpty ? null : leaveOut, out var left);
                    leftOut += left;
                    if (batch.Items.Count > 0 || batch.Revisions.Count > 0 || batch.RevisionTombstones.Count > 0 || left == 0 || batch.LastEtag == from || leftOut >= MaxLeftOutPerBatch)
                    {
                        break;
                    }
                    // Everything read was left out: read on rather than send an empty batch per read.
                    from = batch.LastEtag;
                }
            }
            if (batch.Items.Count == 0 && batch.LastEtag == position && batch.Revisions.Count == 0 && batch.LastRevisionEtag == revisionPosition)
            {
                // Nothing new: wait for the next durable commit, or send a heartbeat.
                using var wait = CancellationTokenSource.CreateLinkedTokenSource(token);
                wait.CancelAfter(Heartbeat);
                try
                {
                    await database.Notifications.WaitForEtagAsync(position + 1, wait.Token).ConfigureAwait(false);
                    continue;
                }
                catch (OperationCanceledException) when (!token.IsCancellationRequested)
                {
                }
            }
            await socket.SendAsync(batch.Serialize(), WebSocketMessageType.Binary, endOfMessage: true, token).ConfigureAwait(false);
            await ReplicationContents.SendAsync(socket, database, batch.Contents, token).ConfigureAwait(false);
            using var ack = CancellationTokenSource.CreateLinkedTokenSource(token);
            ack.CancelAfter(AckTimeout);
            (position, vouched) = await ReadPositionAsync(messages, "Ack", ack.Token).ConfigureAwait(false);
            holds = DestinationKnowledge.Of(hello.DatabaseId, vouched);
            revisionPosition = Math.Max(revisionPosition, batch.LastRevisionEtag);
            Interlocked.Exchange(ref _acknowledgedRevision, revisionPosition);
            _sendAllContents = false;
            BatchesSent++;
            Interlocked.Add(ref _leftOut, leftOut);
            Acknowledge(position);
            // Only an acknowledged batch resets the back-off: a destination that answers Hello but
            // refuses every batch is retried ever more slowly, not every 100 ms.
            Failures = 0;
            acknowledged();
        }
    }

    private Uri PushUri(DocumentDatabase database)
    {
        var baseUrl = Destination.Url.TrimEnd('/');
        if (baseUrl.StartsWith("https://", StringComparison.OrdinalIgnoreCase))
        {
            baseUrl = "wss://" + baseUrl[8..];
        }
        else if (baseUrl.StartsWith("http://", StringComparison.OrdinalIgnoreCase))
        {
            baseUrl = "ws://" + baseUrl[7..];
        }
        return new Uri($"{baseUrl}/databases/{Uri.EscapeDataString(Database)}/replication/push?sourceDatabaseId={Uri.EscapeDataString(database.DatabaseId)}&sourceTag={Uri.EscapeDataString(MyTag)}");
    }

    private static async Task<(long Position, string? Vouched, (string? DatabaseId, string? NodeTag, long LastRevisionEtag) Hello)> ReadHelloAsync(WebSocketMessageReader messages, CancellationToken token)
    {
        var (position, known) = await ReadPositionAsync(messages, "Hello", token).ConfigureAwait(false);
        using var json = JsonDocument.Parse(messages.Message);
        var root = json.RootElement;
        var databaseId = root.TryGetProperty("DatabaseId", out var id) && id.ValueKind == JsonValueKind.String ? id.GetString() : null;
        var nodeTag = root.TryGetProperty("NodeTag", out var tag) && tag.ValueKind == JsonValueKind.String ? tag.GetString() : null;
        var revisionEtag = root.TryGetProperty("LastRevisionEtag", out var revision) && revision.ValueKind == JsonValueKind.Number ? revision.GetInt64() : 0;
        return (position, known, (databaseId, nodeTag, revisionEtag));
    }

    /// <summary>A Hello's or Ack's position and the change vector the destination vouches it holds (null when it does not say: an older node).</summary>
    private static async Task<(long Position, string? Vouched)> ReadPositionAsync(WebSocketMessageReader messages, string type, CancellationToken token)
    {
        var read = await messages.ReadAsync(token).ConfigureAwait(false);
        if (read != WebSocketRead.Message)
        {
            throw new WebSocketException($"The destination closed the replication connection instead of answering {type}.");
        }
        using var json = JsonDocument.Parse(messages.Message);
        var root = json.RootElement;
        if (root.TryGetProperty("Type", out var got) && got.GetString() == "Error")
        {
            if (root.TryGetProperty("MissingAttachments", out var missing) && missing.ValueKind == JsonValueKind.True)
            {
                throw new MissingAttachmentsException("The destination lacks an attachment content: " + (root.TryGetProperty("Message", out var text) ? text.GetString() : "no reason given"));
            }
            throw new InvalidOperationException("The destination refused replication: " + (root.TryGetProperty("Message", out var message) ? message.GetString() : "no reason given"));
        }
        if (!root.TryGetProperty("Type", out got) || got.GetString() != type || !root.TryGetProperty("LastEtag", out var etag))
        {
            throw new InvalidDataException($"The destination answered {messages.Message.Length} bytes that are not {type}.");
        }
        var vouched = root.TryGetProperty("ChangeVector", out var vector) && vector.ValueKind == JsonValueKind.String ? vector.GetString() : null;
        return (etag.GetInt64(), vouched);
    }

    private void Acknowledge(long position)
    {
        Interlocked.Exchange(ref _acknowledged, position);
        _progress();
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        try
        {
            await _run.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        _stop.Dispose();
    }
}

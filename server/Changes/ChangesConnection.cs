using System.Globalization;
using System.Threading.Channels;

namespace Jackdaw.Server.Changes;

/// <summary>
/// One client of the changes feed: its id, what it watches and its bounded queue of messages to
/// send. The feed offers it every commit (while it watches documents) and the index and operation
/// changes it watches, on the publishing thread; a protocol session (WebSocket or event stream) reads the
/// queue, picks the changes the connection watches and writes them to the client. A queue that
/// fills up closes the connection as <see cref="ChangesCloseReason.TooSlow"/>: what was queued is
/// dropped and the session sends a notice instead.
/// </summary>
public sealed class ChangesConnection : IDisposable
{
    private static long s_lastId;

    private readonly ChangesFeed _feed;
    private readonly Channel<ChangesMessage> _queue;
    private readonly CancellationTokenSource _abort = new();
    private WatchSet _watches;
    private int _closeReason;
    private long _sent;
    private long _pending;

    internal ChangesConnection(ChangesFeed feed, ChangesProtocol protocol, WatchSet watches)
    {
        _feed = feed;
        Protocol = protocol;
        _watches = watches;
        Id = Interlocked.Increment(ref s_lastId);
        ConnectedAt = DateTime.UtcNow;
        Capacity = feed.Options.QueueCapacity;
        // Unbounded in entries, bounded by their weight (Offer): a commit weighs its changes.
        _queue = Channel.CreateUnbounded<ChangesMessage>(new UnboundedChannelOptions { SingleReader = true });
    }

    /// <summary>Unique on this server for as long as it runs.</summary>
    public long Id { get; }

    public ChangesProtocol Protocol { get; }

    public DateTime ConnectedAt { get; }

    /// <summary>The most changes (and other messages) that may wait to be sent.</summary>
    public int Capacity { get; }

    public WatchSet Watches => Volatile.Read(ref _watches);

    /// <summary>The weight of what waits to be sent: changes of queued commits (at most), other messages.</summary>
    public long Pending => Interlocked.Read(ref _pending);

    /// <summary>Messages handed to the client so far (the session counts them).</summary>
    public long Sent => Interlocked.Read(ref _sent);

    public ChangesCloseReason CloseReason => (ChangesCloseReason)Volatile.Read(ref _closeReason);

    /// <summary>The messages to send, in order; completes when the connection closes.</summary>
    public ChannelReader<ChangesMessage> Messages => _queue.Reader;

    /// <summary>
    /// Cancelled <see cref="ChangesOptions.CloseGrace"/> after the connection closes: a session still
    /// writing by then (to a client that does not read) gives up and aborts the socket.
    /// </summary>
    public CancellationToken Aborted => _abort.Token;

    public ChangesOptions Options => _feed.Options;

    /// <summary>The feed (and so the database) this connection watches.</summary>
    public ChangesFeed Feed => _feed;

    internal void CountSent(int messages) => Interlocked.Add(ref _sent, messages);

    /// <summary>The session is done with a queued entry: its weight no longer counts.</summary>
    public void Release(in ChangesMessage message) => Interlocked.Add(ref _pending, -message.Weight);

    /// <summary>
    /// Queues a message without ever waiting (the publishing thread calls it). Past the capacity
    /// the connection closes as <see cref="ChangesCloseReason.TooSlow"/>; one commit larger than the
    /// capacity is still taken when nothing else waits, so that a client keeping up is never dropped
    /// for the size of a transaction (a bulk insert's).
    /// </summary>
    public void Offer(in ChangesMessage message)
    {
        if (CloseReason != ChangesCloseReason.None)
        {
            return;
        }
        var pending = Interlocked.Add(ref _pending, message.Weight);
        if (pending > Capacity && pending > message.Weight)
        {
            Interlocked.Add(ref _pending, -message.Weight);
            Close(ChangesCloseReason.TooSlow);
            return;
        }
        if (!_queue.Writer.TryWrite(message))
        {
            Interlocked.Add(ref _pending, -message.Weight); // closed meanwhile
        }
    }

    /// <summary>Changes what this connection watches (an event stream's filter, set once; the WebSocket's commands).</summary>
    public void Watch(Func<WatchSet, WatchSet> change)
    {
        WatchSet current, next;
        do
        {
            current = Volatile.Read(ref _watches);
            next = change(current);
        }
        while (Interlocked.CompareExchange(ref _watches, next, current) != current);
    }

    /// <summary>
    /// Applies one command a client sent (the text of one WebSocket message): updates the watches
    /// and queues <c>Confirm</c>, or queues an <c>Error</c> naming what was wrong. The connection
    /// stays open either way.
    /// </summary>
    public void HandleCommand(ReadOnlySpan<byte> json)
    {
        if (!ChangesCommand.TryParse(json, out var command, out var commandId, out var error))
        {
            SendError(error!, "InvalidCommand", commandId);
            return;
        }
        if (!TryApply(command!, out error))
        {
            SendError(error!, "InvalidCommand", command!.CommandId);
            return;
        }
        if (command!.CommandId is { } id)
        {
            Offer(ChangesMessage.Raw(ChangesJson.Confirm(id)));
        }
    }

    /// <summary>Queues an <c>Error</c> message.</summary>
    public void SendError(string message, string? code = null, long? commandId = null) =>
        Offer(ChangesMessage.Raw(ChangesJson.Error(message, code, commandId)));

    /// <summary>The most single entries (ids, prefixes, collections, indexes) one connection watches.</summary>
    public const int MaxWatches = 4096;

    /// <summary>The longest id, prefix, collection or index name a watch command may name.</summary>
    public const int MaxParamLength = 2048;

    private bool TryApply(ChangesCommand command, out string? error)
    {
        error = null;
        var name = command.Name.ToLowerInvariant();
        var on = name.StartsWith("watch-", StringComparison.Ordinal);
        var what = on ? name["watch-".Length..]
            : name.StartsWith("unwatch-", StringComparison.Ordinal) ? name["unwatch-".Length..]
            : "";
        switch (what)
        {
            case "docs":
                Watch(w => w.WithAllDocuments(on));
                return true;
            case "indexes":
                Watch(w => w.WithAllIndexes(on));
                return true;
            case "operations":
                Watch(w => w.WithAllOperations(on));
                return true;
            case "attachments":
                Watch(w => w.WithAllAttachments(on));
                return true;
            case "operation":
                // RavenDB's clients send the id as a string ("17"); a number is read as text too.
                if (!long.TryParse(command.Param, NumberStyles.None, CultureInfo.InvariantCulture, out var operation))
                {
                    error = $"'{command.Name}' needs \"Param\": the operation id (a whole number, as operations/next-operation-id gave it){(command.Param is null ? "" : $", not '{Shorten(command.Param)}'")}.";
                    return false;
                }
                if (on && Watches.Count >= MaxWatches)
                {
                    error = $"A connection watches at most {MaxWatches:N0} ids, prefixes, collections, indexes and operations: unwatch some first, or watch all operations.";
                    return false;
                }
                Watch(w => w.WithOperation(operation, on));
                return true;
            case "doc" or "prefix" or "collection" or "index" or "document-attachments":
                if (string.IsNullOrEmpty(command.Param))
                {
                    error = $"'{command.Name}' needs \"Param\": the {(what is "doc" or "document-attachments" ? "document id" : what == "prefix" ? "id prefix" : what == "collection" ? "collection" : "index name")}.";
                    return false;
                }
                var param = command.Param;
                // Bounded per connection: memory, and the work of matching each change.
                if (on && param.Length > MaxParamLength)
                {
                    error = $"'{command.Name}': \"Param\" has {param.Length:N0} characters; at most {MaxParamLength:N0}.";
                    return false;
                }
                if (on && Watches.Count >= MaxWatches)
                {
                    error = $"A connection watches at most {MaxWatches:N0} ids, prefixes, collections and indexes: unwatch some first, or watch a collection or all documents.";
                    return false;
                }
                Watch(what switch
                {
                    "doc" => w => w.WithDocument(param, on),
                    "prefix" => w => w.WithPrefix(param, on),
                    "collection" => w => w.WithCollection(param, on),
                    "document-attachments" => w => w.WithAttachmentsOf(param, on),
                    _ => w => w.WithIndex(param, on),
                });
                return true;
        }
        if (IsAcceptedWithoutEvents(name))
        {
            return true;
        }
        error = $"Unknown command '{command.Name}'. The changes feed knows watch-doc, watch-docs, watch-prefix, watch-collection, watch-index, watch-indexes, watch-operation, watch-operations, watch-attachments, watch-document-attachments and their unwatch- forms.";
        return false;
    }

    private static string Shorten(string text) => text.Length <= 64 ? text : text[..64] + "…";

    /// <summary>
    /// Commands of RavenDB's clients for things Jackdaw does not publish (counters, time series,
    /// topology): confirmed, so a client that sends them is not failed, and never followed by an event.
    /// </summary>
    private static bool IsAcceptedWithoutEvents(string name) => name is
        "watch-counters" or "unwatch-counters" or "watch-counter" or "unwatch-counter"
        or "watch-document-counters" or "unwatch-document-counters" or "watch-document-counter" or "unwatch-document-counter"
        or "watch-all-timeseries" or "unwatch-all-timeseries" or "watch-timeseries" or "unwatch-timeseries"
        or "watch-all-document-timeseries" or "unwatch-all-document-timeseries" or "watch-document-timeseries" or "unwatch-document-timeseries"
        or "watch-topology-change";

    /// <summary>
    /// Closes the connection (the first reason wins): no message is queued after it; the session
    /// sends what is queued (except when <see cref="ChangesCloseReason.TooSlow"/>) and says goodbye
    /// within <see cref="ChangesOptions.CloseGrace"/>.
    /// </summary>
    public void Close(ChangesCloseReason reason)
    {
        if (reason == ChangesCloseReason.None || Interlocked.CompareExchange(ref _closeReason, (int)reason, 0) != 0)
        {
            return;
        }
        _queue.Writer.TryComplete();
        try
        {
            _abort.CancelAfter(_feed.Options.CloseGrace);
        }
        catch (ObjectDisposedException)
        {
        }
    }

    /// <summary>Closes the connection (if still open) and removes it from its feed.</summary>
    public void Dispose()
    {
        Close(ChangesCloseReason.ClientClosed);
        _feed.Remove(this);
        _abort.Dispose();
    }
}

using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using Jackdaw.Server.Documents;

namespace Jackdaw.Server.Changes;

/// <summary>
/// Runs one changes connection as server-sent events (<c>text/event-stream</c>), for curl and
/// <c>EventSource</c>: each document change of the filter is an event whose <c>id:</c> is its etag
/// and whose <c>data:</c> is the change's JSON (<c>{"Type":"Put","Id":…,"CollectionName":…,"ChangeVector":…}</c>).
/// An operation's status change of the filter is an event named <c>OperationStatusChange</c>
/// whose <c>data:</c> is <c>{"OperationId":…,"State":{…}}</c>, without an <c>id:</c>: it is not
/// a position in the etag feeds, so it leaves the client's <c>Last-Event-ID</c> as it was, and a
/// resumed stream does not replay it (the next progress, or the state at <c>operations/state</c>,
/// says where the operation stands).
/// </summary>
/// <remarks>
/// The stream covers every change after its position P. It starts at the database's last etag
/// when it connects (sent as an <c>id:</c> line without data, so a client that heard nothing still
/// has a position to resume from), or, when the client names a <c>Last-Event-ID</c> L, replays
/// from the etag feeds what is still in the database in (L, P] before going live. No gap: the
/// connection is registered before P is read, so every change after P is queued live (a commit is
/// visible to readers before it is published). No duplicate: live changes at or below P are
/// dropped, the replay having had them.
/// </remarks>
public static class ChangesEventStream
{
    private static ReadOnlySpan<byte> IdField => "id: "u8;
    private static ReadOnlySpan<byte> DataField => "data: "u8;

    public static async Task RunAsync(ChangesConnection connection, PipeWriter output, long? lastEventId, CancellationToken requestAborted, CancellationToken serverStopping)
    {
        using var stopping = serverStopping.Register(static c => ((ChangesConnection)c!).Close(ChangesCloseReason.ServerStopping), connection);
        using var aborted = requestAborted.Register(static c => ((ChangesConnection)c!).Close(ChangesCloseReason.ClientClosed), connection);
        using var token = CancellationTokenSource.CreateLinkedTokenSource(requestAborted, connection.Aborted);
        try
        {
            long position;
            using (var reader = connection.Feed.Database.BeginRead())
            {
                position = reader.LastEtag;
            }
            // Reconnect quickly; a comment first so that curl shows the stream is open.
            Write(output, ": jackdaw changes feed\nretry: 1000\n\n"u8);
            if (lastEventId is { } after && after < position && !await ReplayAsync(connection, output, after, position, token.Token).ConfigureAwait(false))
            {
                // Cut short (too slow, dropped, closing): neither the position nor a live change
                // is sent, so the client's Last-Event-ID stays at the last event it got and its
                // reconnect replays the rest.
                await WriteTooSlowAsync(connection, output, token.Token).ConfigureAwait(false);
                return;
            }
            WritePosition(output, position);
            await output.FlushAsync(token.Token).ConfigureAwait(false);
            await LiveAsync(connection, output, position, token.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or ObjectDisposedException)
        {
            // The client went away, or did not read within the grace after the stream closed.
        }
    }

    /// <summary>Sends what is still in the database in (after, position]; false when the connection closed first.</summary>
    private static async Task<bool> ReplayAsync(ChangesConnection connection, PipeWriter output, long after, long position, CancellationToken token)
    {
        var chunk = new List<DocumentChange>();
        var databaseId = connection.Feed.Database.DatabaseId;
        while (after < position)
        {
            chunk.Clear();
            after = ChangesReplay.ReadChunk(connection.Feed.Database, connection.Watches, after, position, chunk);
            foreach (var change in chunk)
            {
                WriteEvent(output, change.Etag, ChangesJson.DocumentChangeValue(change, databaseId));
            }
            await output.FlushAsync(token).ConfigureAwait(false);
            if (connection.CloseReason != ChangesCloseReason.None && after < position)
            {
                return false; // the live queue overflowed meanwhile, or the stream closed
            }
        }
        return true;
    }

    private static async Task LiveAsync(ChangesConnection connection, PipeWriter output, long position, CancellationToken token)
    {
        var messages = connection.Messages;
        var filter = connection.Watches;
        // One token source for every idle wait (reset, not reallocated, after each wake-up).
        var idle = CancellationTokenSource.CreateLinkedTokenSource(token);
        try
        {
            while (connection.CloseReason != ChangesCloseReason.TooSlow)
            {
                var sent = 0;
                while (sent < 4096 && messages.TryRead(out var message))
                {
                    if (message.Kind == ChangesMessageKind.Commit)
                    {
                        sent += await WriteCommitAsync(output, message.Commit!, filter, position, token).ConfigureAwait(false);
                    }
                    else if (message.Kind == ChangesMessageKind.Operation)
                    {
                        WriteNamedEvent(output, "event: OperationStatusChange\n"u8, message.Payload!);
                        sent++;
                    }
                    connection.Release(message);
                }
                if (sent > 0)
                {
                    connection.CountSent(sent);
                    await output.FlushAsync(token).ConfigureAwait(false);
                }
                else if (!messages.TryPeek(out _))
                {
                    if (!idle.TryReset())
                    {
                        idle.Dispose();
                        idle = CancellationTokenSource.CreateLinkedTokenSource(token);
                    }
                    idle.CancelAfter(connection.Options.EventStreamHeartbeat);
                    try
                    {
                        if (!await messages.WaitToReadAsync(idle.Token).ConfigureAwait(false))
                        {
                            break;
                        }
                    }
                    catch (OperationCanceledException) when (!token.IsCancellationRequested)
                    {
                        Write(output, ": keep-alive\n\n"u8);
                        await output.FlushAsync(token).ConfigureAwait(false);
                    }
                }
            }
        }
        finally
        {
            idle.Dispose();
        }
        await WriteTooSlowAsync(connection, output, token).ConfigureAwait(false);
    }

    /// <summary>The <c>TooSlow</c> event, when that is why the stream ends.</summary>
    private static async Task WriteTooSlowAsync(ChangesConnection connection, PipeWriter output, CancellationToken token)
    {
        if (connection.CloseReason == ChangesCloseReason.TooSlow)
        {
            Write(output, "event: TooSlow\n"u8);
            Write(output, DataField);
            Write(output, ChangesJson.Error(
                $"TooSlow: more than {connection.Capacity:N0} changes waited for this client, which did not read them fast enough; the stream is closed. Reconnect with Last-Event-ID (EventSource does) to resume without a gap.",
                "TooSlow"));
            Write(output, "\n\n"u8);
            await output.FlushAsync(token).ConfigureAwait(false);
        }
    }

    /// <summary>Writes the changes of a commit that pass the filter and come after the position; returns how many.</summary>
    private static async ValueTask<int> WriteCommitAsync(PipeWriter output, PublishedCommit commit, WatchSet filter, long position, CancellationToken token)
    {
        var changes = commit.Changes;
        var sent = 0;
        for (var i = 0; i < changes.Count; i++)
        {
            // Changes at or below the position came before the stream's start (or in its replay).
            if (changes[i].Etag <= position || !filter.Matches(changes[i]))
            {
                continue;
            }
            WriteEvent(output, changes[i].Etag, commit.PayloadOf(i));
            // A large commit goes out in parts, not buffered whole.
            if (++sent % 1024 == 0)
            {
                await output.FlushAsync(token).ConfigureAwait(false);
            }
        }
        return sent;
    }

    private static void WritePosition(PipeWriter output, long etag)
    {
        Write(output, IdField);
        WriteNumber(output, etag);
        Write(output, "\n\n"u8);
    }

    private static void WriteEvent(PipeWriter output, long etag, byte[] data)
    {
        Write(output, IdField);
        WriteNumber(output, etag);
        Write(output, "\n"u8);
        Write(output, DataField);
        Write(output, data);
        Write(output, "\n\n"u8);
    }

    private static void WriteNamedEvent(PipeWriter output, ReadOnlySpan<byte> eventLine, byte[] data)
    {
        Write(output, eventLine);
        Write(output, DataField);
        Write(output, data);
        Write(output, "\n\n"u8);
    }

    private static void WriteNumber(PipeWriter output, long value)
    {
        var span = output.GetSpan(20);
        Utf8Formatter.TryFormat(value, span, out var written);
        output.Advance(written);
    }

    private static void Write(PipeWriter output, ReadOnlySpan<byte> bytes) => output.Write(bytes);
}

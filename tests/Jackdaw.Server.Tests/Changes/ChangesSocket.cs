using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;

namespace Jackdaw.Server.Tests.Changes;

/// <summary>
/// A test client of <c>/databases/{db}/changes</c>: sends commands, and reads every frame (a JSON
/// array of messages) into a queue of single messages until the server closes.
/// </summary>
public sealed class ChangesSocket : IAsyncDisposable
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly Channel<JsonElement> _messages = Channel.CreateUnbounded<JsonElement>();
    private readonly Task _reading;
    private long _commandId;

    private ChangesSocket(ClientWebSocket socket, bool read)
    {
        Socket = socket;
        _reading = read ? Task.Run(ReadAllAsync) : Task.CompletedTask;
    }

    public ClientWebSocket Socket { get; }

    /// <summary>Messages other than confirmations, in arrival order.</summary>
    public ChannelReader<JsonElement> Messages => _messages.Reader;

    public static Uri UriOf(Uri server, string db) => new($"ws://{server.Authority}/databases/{db}/changes");

    /// <summary>Connects; with <paramref name="read"/> false nothing reads the socket (a slow consumer).</summary>
    public static async Task<ChangesSocket> ConnectAsync(Uri server, string db, bool read = true)
    {
        var socket = new ClientWebSocket();
        await socket.ConnectAsync(UriOf(server, db), CancellationToken.None);
        return new ChangesSocket(socket, read);
    }

    public Task SendTextAsync(string text) => Socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, true, CancellationToken.None);

    /// <summary>Sends a command with the next id and waits for its confirmation; returns the id.</summary>
    public async Task<long> CommandAsync(string command, string? param = null)
    {
        var id = Interlocked.Increment(ref _commandId);
        await SendTextAsync(JsonSerializer.Serialize(new { CommandId = id, Command = command, Param = param }));
        var confirm = await NextAsync(m => m.GetProperty("Type").GetString() is "Confirm" or "Error");
        Assert.True(confirm.GetProperty("Type").GetString() == "Confirm", "Expected a confirmation, got " + confirm);
        Assert.Equal(id, confirm.GetProperty("CommandId").GetInt64());
        return id;
    }

    /// <summary>The next message that matches, skipping the others.</summary>
    public async Task<JsonElement> NextAsync(Func<JsonElement, bool>? match = null)
    {
        using var timeout = new CancellationTokenSource(Timeout);
        while (true)
        {
            JsonElement message;
            try
            {
                message = await _messages.Reader.ReadAsync(timeout.Token);
            }
            catch (ChannelClosedException)
            {
                throw new InvalidOperationException($"The server closed the connection ({Socket.CloseStatus} {Socket.CloseStatusDescription}) before the expected message.");
            }
            if (match is null || match(message))
            {
                return message;
            }
        }
    }

    /// <summary>The document changes (their <c>Value</c>s) up to and including the one of <paramref name="lastId"/>.</summary>
    public async Task<List<JsonElement>> DocumentChangesUntilAsync(string lastId)
    {
        var changes = new List<JsonElement>();
        while (true)
        {
            var message = await NextAsync(m => m.GetProperty("Type").GetString() == "DocumentChange");
            var value = message.GetProperty("Value");
            changes.Add(value);
            if (value.GetProperty("Id").GetString() == lastId)
            {
                return changes;
            }
        }
    }

    /// <summary>Completes when the server has closed the connection and every message was read.</summary>
    public Task Closed => _reading;

    private async Task ReadAllAsync()
    {
        try
        {
            await ReadUntilClosedAsync(Socket, m => _messages.Writer.TryWrite(m));
        }
        finally
        {
            _messages.Writer.TryComplete();
        }
    }

    /// <summary>Reads frames, splitting each array into its messages, until the server closes (then completes the handshake).</summary>
    public static async Task ReadUntilClosedAsync(ClientWebSocket socket, Action<JsonElement> onMessage)
    {
        var buffer = new byte[64 * 1024];
        try
        {
            while (true)
            {
                using var frame = new MemoryStream();
                WebSocketReceiveResult result;
                do
                {
                    result = await socket.ReceiveAsync(buffer, CancellationToken.None);
                    frame.Write(buffer, 0, result.Count);
                }
                while (!result.EndOfMessage);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    if (socket.State == WebSocketState.CloseReceived)
                    {
                        try
                        {
                            await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None);
                        }
                        catch (InvalidOperationException)
                        {
                            // The test is sending at the same moment; the server closes anyway.
                        }
                    }
                    return;
                }
                using var json = JsonDocument.Parse(frame.ToArray());
                if (json.RootElement.ValueKind == JsonValueKind.Array)
                {
                    foreach (var message in json.RootElement.EnumerateArray())
                    {
                        onMessage(message.Clone());
                    }
                }
                else
                {
                    onMessage(json.RootElement.Clone());
                }
            }
        }
        catch (WebSocketException)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Socket.State == WebSocketState.Open)
        {
            // Close output only: the reading loop receives the server's answer.
            try
            {
                await Socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "done", new CancellationTokenSource(Timeout).Token);
            }
            catch (Exception e) when (e is WebSocketException or OperationCanceledException)
            {
            }
        }
        await _reading.WaitAsync(Timeout).ConfigureAwait(false);
        Socket.Dispose();
    }
}

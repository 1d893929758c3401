using System.Net.Sockets;
using System.Text;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// A TCP connection to the server that sends exactly the bytes a test writes: what HttpClient
/// will not do (stop in the middle of a body, send nothing at all, hold a connection open).
/// </summary>
public sealed class RawConnection : IDisposable
{
    private readonly TcpClient _client;

    private RawConnection(TcpClient client)
    {
        _client = client;
        Stream = client.GetStream();
    }

    public NetworkStream Stream { get; }

    public static async Task<RawConnection> OpenAsync(Uri server)
    {
        var client = new TcpClient { NoDelay = true };
        await client.ConnectAsync(server.Host, server.Port);
        return new RawConnection(client);
    }

    public Task SendAsync(string text) => Stream.WriteAsync(Encoding.ASCII.GetBytes(text)).AsTask();

    /// <summary>
    /// Reads one response: its head, then as many body bytes as its Content-Length says; or what
    /// came before the server closed the connection (empty when it said nothing).
    /// </summary>
    public async Task<string> ReadResponseAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        var received = new MemoryStream();
        var buffer = new byte[16 * 1024];
        while (true)
        {
            var text = Encoding.UTF8.GetString(received.GetBuffer(), 0, (int)received.Length);
            var end = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
            if (end >= 0 && received.Length >= end + 4 + ContentLength(text[..end]))
            {
                return text;
            }
            int read;
            try
            {
                read = await Stream.ReadAsync(buffer, cancel.Token);
            }
            catch (IOException)
            {
                read = 0; // reset rather than closed: either way nothing more comes
            }
            if (read == 0)
            {
                return text;
            }
            received.Write(buffer, 0, read);
        }
    }

    /// <summary>
    /// What the server sends until it closes the connection (a TLS alert, say; usually nothing), or
    /// null when it has not closed it within <paramref name="timeout"/>. A reset rather than a close
    /// throws: that is not closing cleanly.
    /// </summary>
    public async Task<byte[]?> ReadUntilClosedAsync(TimeSpan timeout)
    {
        using var cancel = new CancellationTokenSource(timeout);
        var received = new MemoryStream();
        var buffer = new byte[1024];
        try
        {
            int read;
            while ((read = await Stream.ReadAsync(buffer, cancel.Token)) > 0)
            {
                received.Write(buffer, 0, read);
            }
            return received.ToArray();
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    /// <summary>Whether the server closed the connection within <paramref name="timeout"/> having sent nothing.</summary>
    public async Task<bool> ClosedByServerAsync(TimeSpan timeout) => await ReadUntilClosedAsync(timeout) is { Length: 0 };

    public void Dispose() => _client.Dispose();

    private static int ContentLength(string head)
    {
        foreach (var line in head.Split("\r\n"))
        {
            if (line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))
            {
                return int.Parse(line["Content-Length:".Length..].Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
        }
        return 0;
    }
}

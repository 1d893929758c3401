using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>
/// Downloads of attachments (<c>GET /attachments</c> and <c>/attachments/bulk</c>) by a client that
/// stops reading: the server must not hold a snapshot while it waits, and must never send bytes
/// other than the attachment's.
/// </summary>
public sealed class AttachmentDownloadTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    /// <summary>Large enough that the socket buffers between server and client cannot hold it.</summary>
    private const int Size = 24 << 20;

    private HttpClient Client => fixture.Client;

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private AttachmentStorageStats Stats(string db)
    {
        using var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    /// <summary>A client with a small receive buffer, so that a server writing to it soon waits.</summary>
    private HttpClient SlowReader() => new(new SocketsHttpHandler
    {
        ConnectCallback = async (context, cancellationToken) =>
        {
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, ReceiveBufferSize = 16 * 1024 };
            try
            {
                await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
                return new NetworkStream(socket, ownsSocket: true);
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        },
    })
    {
        BaseAddress = Client.BaseAddress,
        Timeout = TimeSpan.FromMinutes(2),
    };

    private async Task<(string Db, byte[] Content)> StoreAsync(int seed)
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "users/1");
        var content = Bytes(Size, seed);
        using var response = await Client.PutAsync($"/databases/{db}/attachments?id=users/1&name=big.bin", new ByteArrayContent(content));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return (db, content);
    }

    private async Task PutAsync(string db, string id)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json("""{"@metadata":{"@collection":"Users"}}"""));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private static HttpRequestMessage Download(string db, bool bulk) => bulk
        ? new HttpRequestMessage(HttpMethod.Post, $"/databases/{db}/attachments/bulk")
        {
            Content = Api.Json("""{"AttachmentType":"Document","Attachments":[{"DocumentId":"users/1","Name":"big.bin"}]}"""),
        }
        : new HttpRequestMessage(HttpMethod.Get, $"/databases/{db}/attachments?id=users/1&name=big.bin");

    private static async Task ReadAtLeastAsync(Stream body, MemoryStream into, int count)
    {
        var buffer = new byte[16 * 1024];
        while (into.Length < count)
        {
            var read = await body.ReadAsync(buffer);
            Assert.True(read > 0, $"The response ended after {into.Length} bytes.");
            into.Write(buffer, 0, read);
        }
    }

    /// <summary>The attachment's bytes in a response: after the metadata JSON for the bulk route.</summary>
    private static byte[] ContentOf(byte[] received, bool bulk)
    {
        if (!bulk)
        {
            return received;
        }
        var reader = new Utf8JsonReader(received, isFinalBlock: false, state: default);
        Assert.True(reader.Read() && reader.TokenType == JsonTokenType.StartObject);
        Assert.True(reader.TrySkip());
        return received[(int)reader.BytesConsumed..];
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ADownloadTheClientStopsReadingDoesNotKeepTheStoreFromFlushing(bool bulk)
    {
        var (db, content) = await StoreAsync(seed: bulk ? 2 : 1);
        var database = fixture.Server.Host.Server.Databases.GetDatabase(db);
        using var slow = SlowReader();
        using var request = Download(db, bulk);
        using var response = await slow.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await using var body = await response.Content.ReadAsStreamAsync();
        var received = new MemoryStream();
        await ReadAtLeastAsync(body, received, 64 * 1024);

        // The client reads nothing more for now, so the server waits on it; the database takes writes.
        for (var i = 0; i < 20; i++)
        {
            await PutAsync(db, $"notes/{i}");
        }
        var written = database.GetStorageStats().LastCommittedTransactionId;
        await Poll.UntilAsync(
            () => Task.FromResult(database.GetStorageStats() is var stats
                && (stats.OldestActiveReaderTransactionId < 0 || stats.OldestActiveReaderTransactionId >= written)
                && stats.FlushedTransactionId >= written),
            TimeSpan.FromSeconds(20),
            "no reader older than the writes, and the writes flushed, while the download waits");

        await body.CopyToAsync(received);
        Assert.Equal(content, ContentOf(received.ToArray(), bulk));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task AnAttachmentDeletedAndCleanedUpMidDownloadEndsTheResponseShort(bool bulk)
    {
        var (db, content) = await StoreAsync(seed: bulk ? 4 : 3);
        using var slow = SlowReader();
        using var request = Download(db, bulk);
        using var response = await slow.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await using var body = await response.Content.ReadAsStreamAsync();
        var received = new MemoryStream();
        await ReadAtLeastAsync(body, received, 64 * 1024);

        using (var delete = await Client.DeleteAsync($"/databases/{db}/attachments?id=users/1&name=big.bin"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(Stats(db) == new AttachmentStorageStats(0, 0, 0, 0)), TimeSpan.FromSeconds(30), "the content's chunks to be deleted");

        var failure = await Record.ExceptionAsync(() => body.CopyToAsync(received));
        Assert.NotNull(failure);
        var got = ContentOf(received.ToArray(), bulk);
        Assert.True(got.Length < content.Length, $"{got.Length} bytes of {content.Length} came.");
        Assert.Equal(content.AsSpan(0, got.Length).ToArray(), got);
    }
}

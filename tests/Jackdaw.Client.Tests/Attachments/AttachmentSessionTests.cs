using System.IO.Pipelines;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json.Nodes;
using Jackdaw.Client.Tests.Infrastructure;
using Microsoft.AspNetCore.WebUtilities;

namespace Jackdaw.Client.Tests.Attachments;

/// <summary>session.Advanced.Attachments on the wire: RavenDB's batch commands, its multipart save, the reads' headers.</summary>
public sealed class AttachmentSessionTests : IDisposable
{
    private const string LoadedUser = """{"Results":[{"Name":"Ann","@metadata":{"@id":"users/1","@change-vector":"A:1-x","@collection":"Users","@flags":"HasAttachments","@attachments":[{"Name":"a.txt","Hash":"aGFzaA==","ContentType":"text/plain","Size":3}]}}],"Includes":{}}""";
    private readonly WireRecorder _wire = new();
    private readonly DocumentStore _store;

    public AttachmentSessionTests() => _store = _wire.CreateStore();

    public void Dispose() => _store.Dispose();

    [Fact]
    public async Task ASecondSaveOfAForwardOnlyStreamAlreadyReadSaysWhyAndSendsNothing()
    {
        _wire.Answer = _ => WireRecorder.Json("""{"Type":"InternalServerErrorException","Message":"boom"}""", HttpStatusCode.InternalServerError);
        using var session = _store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
        session.Advanced.Attachments.Store("users/1", "a.bin", new ForwardOnly([1, 2, 3]));
        await Assert.ThrowsAsync<JackdawException>(() => session.SaveChangesAsync());

        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => session.SaveChangesAsync());

        Assert.Contains("forward-only", error.Message);
        Assert.Single(_wire.Requests);
    }

    [Fact]
    public async Task StoredAttachmentsTravelAsMultipartPartsAfterTheCommandsJson()
    {
        _wire.Answer = r => WireRecorder.Json(BulkResults(
            """{"Type":"PUT","@id":"users/1","@change-vector":"A:1-x"}""",
            """{"Type":"AttachmentPUT","Id":"users/1","Name":"photo.png","Hash":"h1","ContentType":"image/png","Size":4,"DocumentChangeVector":"A:2-x"}""",
            """{"Type":"AttachmentPUT","Id":"users/1","Name":"empty","Hash":"h2","ContentType":"","Size":0,"DocumentChangeVector":"A:3-x"}"""));
        using var session = _store.OpenAsyncSession();
        var user = new User { Id = "users/1", Name = "Ann" };
        await session.StoreAsync(user);
        session.Advanced.Attachments.Store("users/1", "photo.png", new MemoryStream([1, 2, 3, 4]), "image/png");
        session.Advanced.Attachments.Store(user, "empty", new MemoryStream());
        await session.SaveChangesAsync();

        var request = Assert.Single(_wire.Requests);
        Assert.Equal("/databases/db/bulk_docs", request.PathAndQuery);
        var parts = await ReadMultipartAsync(request);
        Assert.Equal(3, parts.Count);
        Assert.StartsWith("application/json", parts[0].Headers["Content-Type"]);
        var commands = JsonNode.Parse(parts[0].Body)!["Commands"]!.AsArray();
        Assert.Equal(["PUT", "AttachmentPUT", "AttachmentPUT"], commands.Select(c => (string?)c!["Type"]));
        Assert.Equal("""{"Id":"users/1","Name":"photo.png","ChangeVector":null,"Type":"AttachmentPUT","ContentType":"image/png"}""", commands[1]!.ToJsonString());
        Assert.Null(commands[2]!["ContentType"]);
        Assert.Equal("AttachmentStream", parts[1].Headers["Command-Type"]);
        Assert.Equal([1, 2, 3, 4], parts[1].Body);
        Assert.Equal("AttachmentStream", parts[2].Headers["Command-Type"]);
        Assert.Empty(parts[2].Body);

        // The results update what the session knows: the names, and the document's change vector.
        Assert.Equal(["empty", "photo.png"], session.Advanced.Attachments.GetNames(user).Select(a => a.Name));
        Assert.Equal("image/png", session.Advanced.Attachments.GetNames(user)[1].ContentType);
        Assert.Equal("A:3-x", session.Advanced.GetChangeVectorFor(user));
        Assert.False(session.Advanced.HasChanges);
    }

    [Fact]
    public async Task TheAttachmentsBytesAreStreamedIntoTheRequestNotBufferedFirst()
    {
        // The stream gives its second half only once the server has received the first: a client
        // that read the whole stream before sending would wait forever.
        var firstHalfArrived = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var source = new GatedStream(Enumerable.Range(0, 100_000).Select(i => (byte)i).ToArray(), 50_000, firstHalfArrived.Task);
        var received = new MemoryStream();
        var handler = new StreamingHandler(async (content, token) =>
        {
            var pipe = new Pipe();
            var copy = content.CopyToAsync(pipe.Writer.AsStream(), token).ContinueWith(t => pipe.Writer.Complete(t.Exception), TaskScheduler.Default);
            var reader = pipe.Reader.AsStream();
            var buffer = new byte[8192];
            int read;
            while ((read = await reader.ReadAsync(buffer, token)) > 0)
            {
                received.Write(buffer, 0, read);
                if (received.Length > 50_000)
                {
                    firstHalfArrived.TrySetResult();
                }
            }

            await copy;
        });
        using var store = new DocumentStore { Urls = ["http://jackdaw.test"], Database = "db", HttpMessageHandlerFactory = () => handler }.Initialize();
        using var session = store.OpenAsyncSession();
        session.Advanced.Attachments.Store("users/1", "big.bin", source);
        await session.SaveChangesAsync().WaitAsync(TimeSpan.FromSeconds(30));

        var text = received.ToArray();
        var payloadStart = IndexOf(text, [0, 1, 2, 3, 4, 5, 6, 7]);
        Assert.True(payloadStart > 0);
        Assert.Equal(source.Data, text.AsSpan(payloadStart, source.Data.Length).ToArray());
    }

    [Fact]
    public async Task ASaveWithoutStoredBytesIsPlainJsonWithRavenDbsDeleteMoveAndCopyCommands()
    {
        _wire.Answer = r => WireRecorder.Json(BulkResults(
            """{"Type":"AttachmentDELETE","@id":"users/1","Name":"a","DocumentChangeVector":"A:5-x"}""",
            """{"Type":"AttachmentMOVE","Id":"users/1","Name":"b","DestinationId":"users/2","DestinationName":"c","Hash":"h","ContentType":"","Size":1}""",
            """{"Type":"AttachmentCOPY","Id":"users/1","Name":"d","DestinationId":"users/2","DestinationName":"e","Hash":"h","ContentType":"","Size":1}""",
            """{"Type":"AttachmentMOVE","Id":"users/1","Name":"f","DestinationId":"users/1","DestinationName":"g","Hash":"h","ContentType":"","Size":1}"""));
        using var session = _store.OpenAsyncSession();
        session.Advanced.Attachments.Delete("users/1", "a");
        session.Advanced.Attachments.Move("users/1", "b", "users/2", "c");
        session.Advanced.Attachments.Copy("users/1", "d", "users/2", "e");
        session.Advanced.Attachments.Rename("users/1", "f", "g");
        session.Advanced.Attachments.Copy("users/1", "same", "USERS/1", "same");
        Assert.True(session.Advanced.HasChanges);
        await session.SaveChangesAsync();

        var request = Assert.Single(_wire.Requests);
        Assert.StartsWith("application/json", request.Header("Content-Type"));
        var commands = request.BodyJson["Commands"]!.AsArray().Select(c => c!.ToJsonString()).ToList();
        Assert.Equal(
        [
            """{"Id":"users/1","Name":"a","ChangeVector":null,"Type":"AttachmentDELETE"}""",
            """{"Id":"users/1","Name":"b","DestinationId":"users/2","DestinationName":"c","ChangeVector":null,"Type":"AttachmentMOVE"}""",
            """{"Id":"users/1","Name":"d","DestinationId":"users/2","DestinationName":"e","ChangeVector":null,"Type":"AttachmentCOPY"}""",
            """{"Id":"users/1","Name":"f","DestinationId":"users/1","DestinationName":"g","ChangeVector":null,"Type":"AttachmentMOVE"}""",
        ], commands);
    }

    [Fact]
    public async Task ContradictingCommandsAreRefusedAsRavenDbRefusesThem()
    {
        _wire.Answer = r => WireRecorder.Json(LoadedUser);
        using var session = _store.OpenAsyncSession();
        var attachments = session.Advanced.Attachments;
        var stream = new MemoryStream([1]);
        attachments.Store("users/1", "a", stream);
        Assert.Throws<InvalidOperationException>(() => attachments.Store("users/1", "A", new MemoryStream()));
        Assert.Throws<InvalidOperationException>(() => attachments.Store("users/1", "b", stream));
        Assert.Throws<InvalidOperationException>(() => attachments.Delete("users/1", "a"));
        attachments.Delete("users/1", "x");
        attachments.Delete("users/1", "x");
        Assert.Throws<InvalidOperationException>(() => attachments.Store("users/1", "x", new MemoryStream()));
        Assert.Throws<InvalidOperationException>(() => attachments.Move("users/1", "x", "users/2", "y"));

        session.Delete("users/3");
        Assert.Throws<InvalidOperationException>(() => attachments.Store("users/3", "a", new MemoryStream()));
        Assert.Throws<InvalidOperationException>(() => attachments.Copy("users/1", "a", "users/3", "a"));
        attachments.Delete("users/3", "anything");
        Assert.Throws<InvalidOperationException>(() => attachments.Store(new User(), "a", new MemoryStream()));
        Assert.Throws<ArgumentException>(() => attachments.Store("users/1", " ", new MemoryStream()));
        Assert.Throws<ArgumentException>(() => attachments.GetNames("users/1"));
        Assert.Empty(_wire.Requests);
    }

    [Fact]
    public async Task GetNamesReadsTheLoadedMetadataAndFollowsTheSavesResults()
    {
        _wire.Answer = r => r.Method == "GET" ? WireRecorder.Json(LoadedUser) : WireRecorder.Json(BulkResults(
            """{"Type":"AttachmentDELETE","@id":"users/1","Name":"a.txt","DocumentChangeVector":"A:9-x"}"""));
        using var session = _store.OpenAsyncSession();
        session.Advanced.UseOptimisticConcurrency = true;
        var user = await session.LoadAsync<User>("users/1");
        var name = Assert.Single(session.Advanced.Attachments.GetNames(user!));
        Assert.Equal(("a.txt", "aGFzaA==", "text/plain", 3L), (name.Name, name.Hash, name.ContentType, name.Size));

        session.Advanced.Attachments.Delete(user!, "a.txt");
        await session.SaveChangesAsync();
        Assert.Empty(session.Advanced.Attachments.GetNames(user!));
        Assert.Equal("A:9-x", session.Advanced.GetChangeVectorFor(user!));
        var attachments = (System.Text.Json.JsonElement)session.Advanced.GetMetadataFor(user!)["@attachments"]!;
        Assert.Equal(0, attachments.GetArrayLength());

        // The next write of the document carries the change vector the attachment's delete gave it.
        user!.Name = "Changed";
        await session.SaveChangesAsync();
        Assert.Equal("A:9-x", (string?)_wire.Requests.Last().BodyJson["Commands"]![0]!["ChangeVector"]);
    }

    [Fact]
    public async Task AMoveGivesTheSourceAndTheDestinationTheirOwnChangeVectors()
    {
        _wire.Answer = r => r.Method == "GET"
            ? WireRecorder.Json("""{"Results":[{"Name":"Ann","@metadata":{"@id":"users/1","@change-vector":"A:1-x","@attachments":[{"Name":"a","Hash":"h","ContentType":"t","Size":1}]}},{"Name":"Bob","@metadata":{"@id":"users/2","@change-vector":"A:2-x"}}],"Includes":{}}""")
            : WireRecorder.Json(BulkResults("""{"Type":"AttachmentMOVE","Id":"users/1","Name":"a","DestinationId":"users/2","DestinationName":"b","Hash":"h","ContentType":"t","Size":1,"DocumentChangeVector":"A:3-x","DestinationDocumentChangeVector":"A:4-x"}"""));
        using var session = _store.OpenAsyncSession();
        var users = await session.LoadAsync<User>(["users/1", "users/2"]);
        session.Advanced.Attachments.Move(users["users/1"]!, "a", users["users/2"]!, "b");
        await session.SaveChangesAsync();
        Assert.Equal(("A:3-x", "A:4-x"), (session.Advanced.GetChangeVectorFor(users["users/1"]!), session.Advanced.GetChangeVectorFor(users["users/2"]!)));
        Assert.Empty(session.Advanced.Attachments.GetNames(users["users/1"]!));
        var moved = Assert.Single(session.Advanced.Attachments.GetNames(users["users/2"]!));
        Assert.Equal(("b", "h", "t", 1L), (moved.Name, moved.Hash, moved.ContentType, moved.Size));
    }

    [Fact]
    public async Task GetAnswersTheResponseStreamAndItsDetailsAndDisposingEndsTheResponse()
    {
        var body = new TrackingStream(Encoding.UTF8.GetBytes("hello"));
        _wire.Answer = r =>
        {
            var response = new HttpResponseMessage(HttpStatusCode.OK) { Content = new StreamContent(body) };
            response.Content.Headers.ContentType = new MediaTypeHeaderValue("text/plain");
            response.Headers.ETag = new EntityTagHeaderValue("\"A:7-x\"");
            response.Headers.Add("Attachment-Hash", "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=");
            response.Headers.Add("Attachment-Size", "5");
            return response;
        };
        using var session = _store.OpenAsyncSession();
        using (var result = await session.Advanced.Attachments.GetAsync("users/1", "greeting name.txt"))
        {
            Assert.NotNull(result);
            Assert.Equal("/databases/db/attachments?id=users%2F1&name=greeting%20name.txt", Assert.Single(_wire.Requests).PathAndQuery);
            Assert.Equal("A:7-x", result.Details.ChangeVector);
            Assert.Equal(5, result.Details.Size);
            Assert.Equal("text/plain", result.Details.ContentType);
            Assert.Equal("LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=", result.Details.Hash);
            Assert.Equal(("users/1", "greeting name.txt"), (result.Details.DocumentId, result.Details.Name));
            Assert.Equal("hel", Encoding.UTF8.GetString(ReadExactly(result.Stream, 3)));
            Assert.False(body.Disposed);
        }

        Assert.True(body.Disposed, "disposing the result ends the response");
        Assert.Equal(1, session.Advanced.NumberOfRequests);
    }

    [Fact]
    public async Task AMissingAttachmentReadsAsNullAndExistsAsFalse()
    {
        _wire.Answer = r => r.Method == "HEAD" && r.PathAndQuery.Contains("name=there")
            ? new HttpResponseMessage(HttpStatusCode.OK) { Headers = { ETag = new EntityTagHeaderValue("\"A:1-x\"") } }
            : new HttpResponseMessage(HttpStatusCode.NotFound);
        using var session = _store.OpenAsyncSession();
        Assert.Null(await session.Advanced.Attachments.GetAsync("users/1", "missing"));
        Assert.False(await session.Advanced.Attachments.ExistsAsync("users/1", "missing"));
        Assert.True(await session.Advanced.Attachments.ExistsAsync("users/1", "there"));
        Assert.Equal(["GET", "HEAD", "HEAD"], _wire.Requests.Select(r => r.Method));
    }

    [Fact]
    public async Task GetRangeAsksForTheBytesWithARangeHeader()
    {
        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.PartialContent) { Content = new ByteArrayContent([2, 3]) };
        using var session = _store.OpenAsyncSession();
        using var result = await session.Advanced.Attachments.GetRangeAsync("users/1", "a", 2, 3);
        Assert.Equal("bytes=2-3", Assert.Single(_wire.Requests).Header("Range"));
        Assert.Equal([2, 3], ReadExactly(result!.Stream, 2));
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => session.Advanced.Attachments.GetRangeAsync("users/1", "a", 5, 2));
    }

    [Fact]
    public async Task ABulkGetReadsTheJsonHeadThenEachAttachmentsBytesInTurn()
    {
        var head = """{"AttachmentsMetadata":[{"Name":"a","DocumentId":"users/1","Hash":"h1","ContentType":"text/plain","Size":3},{"Name":"b","DocumentId":"users/2","Hash":"h2","ContentType":"","Size":0},{"Name":"c","DocumentId":"users/2","Hash":"h3","ContentType":"","Size":4}]}""";
        var answer = Encoding.UTF8.GetBytes(head).Concat("abc"u8.ToArray()).Concat("wxyz"u8.ToArray()).ToArray();
        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.OK) { Content = new StreamContent(new TrickleStream(answer, 5)) };
        using var session = _store.OpenAsyncSession();
        await using var enumerator = await session.Advanced.Attachments.GetAsync([new AttachmentRequest("users/1", "a"), new AttachmentRequest("users/2", "b"), new AttachmentRequest("users/2", "c")]);

        var request = Assert.Single(_wire.Requests);
        Assert.Equal(("POST", "/databases/db/attachments/bulk"), (request.Method, request.PathAndQuery));
        Assert.Equal("""{"AttachmentType":"Document","Attachments":[{"DocumentId":"users/1","Name":"a"},{"DocumentId":"users/2","Name":"b"},{"DocumentId":"users/2","Name":"c"}]}""", request.BodyText);

        Assert.True(await enumerator.MoveNextAsync());
        Assert.Equal(("a", "users/1", 3L), (enumerator.Current.Details.Name, enumerator.Current.Details.DocumentId, enumerator.Current.Details.Size));
        Assert.Equal("a", Encoding.UTF8.GetString(ReadExactly(enumerator.Current.Stream, 1)));

        // Moving on skips what the previous stream left.
        Assert.True(await enumerator.MoveNextAsync());
        Assert.Equal(0, enumerator.Current.Stream.Read(new byte[4]));
        Assert.True(await enumerator.MoveNextAsync());
        Assert.Equal("wxyz", new StreamReader(enumerator.Current.Stream).ReadToEnd());
        Assert.False(await enumerator.MoveNextAsync());
    }

    [Fact]
    public async Task ABulkAnswerCutShortInsideAnAttachmentThrows()
    {
        var answer = Encoding.UTF8.GetBytes("""{"AttachmentsMetadata":[{"Name":"a","Size":10}]}abc""");
        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.OK) { Content = new ByteArrayContent(answer) };
        using var session = _store.OpenAsyncSession();
        await using var enumerator = await session.Advanced.Attachments.GetAsync([new AttachmentRequest("users/1", "a")]);
        Assert.True(await enumerator.MoveNextAsync());
        var error = await Assert.ThrowsAsync<JackdawException>(() => new StreamReader(enumerator.Current.Stream).ReadToEndAsync());
        Assert.Contains("7 bytes before the end of attachment 'a'", error.Message);
    }

    [Theory]
    [MemberData(nameof(Prefixes))]
    public void TheJsonHeadIsFoundOnlyOnceItIsWhole(int length)
    {
        var head = """ {"AttachmentsMetadata":[{"Name":"a}]","Size":1}]} """u8.ToArray();
        var data = head.Concat(new byte[] { 0x7B, 0x22 }).ToArray();
        var whole = head.Length - 1;
        Assert.Equal(length >= whole, Jackdaw.Client.Attachments.AttachmentsEnumerator.TryFindJsonEnd(data.AsSpan(0, length), out var found));
        if (length >= whole)
        {
            Assert.Equal(whole, found);
        }
    }

    public static TheoryData<int> Prefixes() => [.. Enumerable.Range(0, 52)];

    [Fact]
    public async Task PutAttachmentOperationSendsTheBytesWithTheContentTypeAndTheChangeVector()
    {
        _wire.Answer = r => WireRecorder.Json("""{"ChangeVector":"A:4-x","Name":"a.pdf","DocumentId":"users/1","ContentType":"application/pdf","Hash":"h","Size":3}""", HttpStatusCode.Created);
        var stream = new MemoryStream([9, 9, 1, 2, 3]) { Position = 2 };
        var details = await _store.Operations.SendAsync(new PutAttachmentOperation("users/1", "a.pdf", stream, "application/pdf", "A:3-x"));

        var request = Assert.Single(_wire.Requests);
        Assert.Equal(("PUT", "/databases/db/attachments?id=users%2F1&name=a.pdf&contentType=application%2Fpdf"), (request.Method, request.PathAndQuery));
        Assert.Equal("\"A:3-x\"", request.Header("If-Match"));
        Assert.Equal("3", request.Header("Content-Length"));
        Assert.Equal([1, 2, 3], request.Body);
        Assert.Equal(("A:4-x", "h", 3L, "application/pdf"), (details.ChangeVector, details.Hash, details.Size, details.ContentType));

        await _store.Operations.SendAsync(new DeleteAttachmentOperation("users/1", "a.pdf"));
        Assert.Equal(("DELETE", "/databases/db/attachments?id=users%2F1&name=a.pdf"), (_wire.Requests.Last().Method, _wire.Requests.Last().PathAndQuery));
        Assert.Null(_wire.Requests.Last().Header("If-Match"));
    }

    [Fact]
    public async Task ARevisionsAttachmentIsAskedForWithAPostNamingTheRevision()
    {
        _wire.Answer = r => new HttpResponseMessage(HttpStatusCode.OK) { Content = new ByteArrayContent([1]) };
        using var result = await _store.Operations.SendAsync(new GetAttachmentOperation("users/1", "a", AttachmentType.Revision, "A:2-x"));
        var request = Assert.Single(_wire.Requests);
        Assert.Equal(("POST", "/databases/db/attachments?id=users%2F1&name=a"), (request.Method, request.PathAndQuery));
        Assert.Equal("""{"Type":"Revision","ChangeVector":"A:2-x"}""", request.BodyText);
        await Assert.ThrowsAsync<ArgumentException>(() => _store.Operations.SendAsync(new GetAttachmentOperation("users/1", "a", AttachmentType.Revision, null)));
    }

    private static string BulkResults(params string[] results) => """{"Results":[""" + string.Join(",", results) + "]}";

    private static async Task<List<(Dictionary<string, string> Headers, byte[] Body)>> ReadMultipartAsync(WireRequest request)
    {
        var type = System.Net.Http.Headers.MediaTypeHeaderValue.Parse(request.Header("Content-Type")!);
        Assert.Equal("multipart/mixed", type.MediaType);
        var boundary = type.Parameters.Single(p => p.Name == "boundary").Value!.Trim('"');
        var reader = new MultipartReader(boundary, new MemoryStream(request.Body!));
        var parts = new List<(Dictionary<string, string>, byte[])>();
        while (await reader.ReadNextSectionAsync() is { } section)
        {
            var body = new MemoryStream();
            await section.Body.CopyToAsync(body);
            parts.Add((section.Headers!.ToDictionary(h => h.Key, h => h.Value.ToString(), StringComparer.OrdinalIgnoreCase), body.ToArray()));
        }

        return parts;
    }

    private static byte[] ReadExactly(Stream stream, int count)
    {
        var buffer = new byte[count];
        stream.ReadExactly(buffer);
        return buffer;
    }

    private static int IndexOf(byte[] data, byte[] pattern) => data.AsSpan().IndexOf(pattern);

    /// <summary>A handler that hands the request's content to a consumer as it is written, then answers one AttachmentPUT result.</summary>
    private sealed class StreamingHandler(Func<HttpContent, CancellationToken, Task> consume) : HttpMessageHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            await consume(request.Content!, cancellationToken);
            return WireRecorder.Json("""{"Results":[{"Type":"AttachmentPUT","Id":"users/1","Name":"big.bin","Hash":"h","ContentType":"","Size":100000}]}""");
        }
    }

    /// <summary>A forward-only stream whose bytes after <c>gateAt</c> wait for <c>gate</c>.</summary>
    private sealed class GatedStream(byte[] data, int gateAt, Task gate) : Stream
    {
        private int _position;

        public byte[] Data => data;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if (_position == gateAt)
            {
                await gate.WaitAsync(cancellationToken);
            }

            var end = _position < gateAt ? gateAt : data.Length;
            var count = Math.Min(buffer.Length, end - _position);
            data.AsMemory(_position, count).CopyTo(buffer);
            _position += count;
            return count;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }

    /// <summary>A response body that gives a few bytes per read, as a network does.</summary>
    private sealed class ForwardOnly(byte[] data) : MemoryStream(data)
    {
        public override bool CanSeek => false;
    }

    private sealed class TrickleStream(byte[] data, int perRead) : MemoryStream(data)
    {
        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, perRead));

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            base.ReadAsync(buffer[..Math.Min(buffer.Length, perRead)], cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            base.ReadAsync(buffer, offset, Math.Min(count, perRead), cancellationToken);
    }

    /// <summary>A response body that says whether it was disposed.</summary>
    private sealed class TrackingStream(byte[] data) : MemoryStream(data)
    {
        public bool Disposed { get; private set; }

        protected override void Dispose(bool disposing)
        {
            Disposed = true;
            base.Dispose(disposing);
        }
    }
}

using System.Security.Cryptography;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>session.Advanced.Attachments and the attachment operations against the real server.</summary>
public sealed class AttachmentServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static readonly byte[] Photo = RandomNumberGenerator.GetBytes(300_000);

    [Fact]
    public async Task AttachmentsStoredWithTheDocumentReadBackWithTheirNamesHashesAndBytes()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            var user = new User { Id = "users/1", Name = "Ann" };
            await session.StoreAsync(user);
            session.Advanced.Attachments.Store(user, "photo.jpg", new MemoryStream(Photo), "image/jpeg");
            session.Advanced.Attachments.Store("users/1", "empty.txt", new MemoryStream(), "text/plain");
            session.Advanced.Attachments.Store("users/1", "one", new MemoryStream([42]));
            await session.SaveChangesAsync();
            Assert.Equal(["empty.txt", "one", "photo.jpg"], session.Advanced.Attachments.GetNames(user).Select(a => a.Name));
        }

        using (var session = store.OpenAsyncSession())
        {
            var user = await session.LoadAsync<User>("users/1");
            var names = session.Advanced.Attachments.GetNames(user!);
            Assert.Equal(["empty.txt", "one", "photo.jpg"], names.Select(a => a.Name));
            var photo = names[2];
            Assert.Equal((Convert.ToBase64String(SHA256.HashData(Photo)), "image/jpeg", (long)Photo.Length), (photo.Hash, photo.ContentType, photo.Size));
            Assert.Equal(0, names[0].Size);
            Assert.Contains("HasAttachments", session.Advanced.GetMetadataFor(user!).GetString("@flags"));

            using (var result = await session.Advanced.Attachments.GetAsync(user!, "photo.jpg"))
            {
                Assert.NotNull(result);
                Assert.Equal(Photo, await ReadAllAsync(result.Stream));
                Assert.Equal((photo.Hash, photo.Size, "users/1"), (result.Details.Hash, result.Details.Size, result.Details.DocumentId));
                Assert.StartsWith("image/jpeg", result.Details.ContentType);
                Assert.False(string.IsNullOrEmpty(result.Details.ChangeVector));
            }

            using (var empty = await session.Advanced.Attachments.GetAsync("users/1", "EMPTY.TXT"))
            {
                Assert.Empty(await ReadAllAsync(empty!.Stream));
            }

            using (var range = await session.Advanced.Attachments.GetRangeAsync("users/1", "photo.jpg", 1000, 1999))
            {
                Assert.Equal(Photo[1000..2000], await ReadAllAsync(range!.Stream));
            }

            Assert.True(await session.Advanced.Attachments.ExistsAsync("users/1", "one"));
            Assert.False(await session.Advanced.Attachments.ExistsAsync("users/1", "two"));
            Assert.False(await session.Advanced.Attachments.ExistsAsync("users/none", "one"));
            Assert.Null(await session.Advanced.Attachments.GetAsync("users/1", "two"));
            Assert.Null(await session.Advanced.Attachments.GetAsync("users/none", "one"));
        }
    }

    [Fact]
    public async Task DeleteRenameMoveAndCopyAreSavedInOneTransactionWithTheDocuments()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            await session.StoreAsync(new User { Id = "users/2", Name = "Bob" });
            foreach (var name in new[] { "a", "b", "c", "d" })
            {
                session.Advanced.Attachments.Store("users/1", name, new MemoryStream([(byte)name[0]]));
            }
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            session.Advanced.UseOptimisticConcurrency = true;
            var ann = await session.LoadAsync<User>("users/1");
            var bob = await session.LoadAsync<User>("users/2");
            session.Advanced.Attachments.Delete(ann!, "a");
            session.Advanced.Attachments.Rename(ann!, "b", "b2");
            session.Advanced.Attachments.Move(ann!, "c", bob!, "c-moved");
            session.Advanced.Attachments.Copy("users/1", "d", "users/2", "d-copy");
            await session.SaveChangesAsync();
            Assert.Equal(["b2", "d"], session.Advanced.Attachments.GetNames(ann!).Select(a => a.Name));
            Assert.Equal(["c-moved", "d-copy"], session.Advanced.Attachments.GetNames(bob!).Select(a => a.Name));

            // The change vectors the attachment commands gave the documents let a concurrency-checked write through.
            bob!.Name = "Bob 2";
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            var ann = await session.LoadAsync<User>("users/1");
            var bob = await session.LoadAsync<User>("users/2");
            Assert.Equal(["b2", "d"], session.Advanced.Attachments.GetNames(ann!).Select(a => a.Name));
            Assert.Equal(["c-moved", "d-copy"], session.Advanced.Attachments.GetNames(bob!).Select(a => a.Name));
            Assert.Equal("Bob 2", bob!.Name);
            using var moved = await session.Advanced.Attachments.GetAsync("users/2", "c-moved");
            Assert.Equal("c"u8.ToArray(), await ReadAllAsync(moved!.Stream));
        }
    }

    [Fact]
    public async Task ABatchThatFailsStoresNoneOfItsAttachments()
    {
        using var store = await server.NewStoreAsync();
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
        session.Advanced.Attachments.Store("users/1", "a", new MemoryStream([1, 2, 3]));
        session.Advanced.Attachments.Store("users/missing", "b", new MemoryStream([4]));
        var missing = await Assert.ThrowsAsync<DocumentDoesNotExistException>(() => session.SaveChangesAsync());
        Assert.Contains("users/missing", missing.Message);
        Assert.Equal(System.Net.HttpStatusCode.UnprocessableEntity, missing.StatusCode);

        using var check = store.OpenAsyncSession();
        Assert.Null(await check.LoadAsync<User>("users/1"));
    }

    [Fact]
    public async Task ALargeForwardOnlyStreamIsStoredAndReadBackWhole()
    {
        const int size = 24 * 1024 * 1024;
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            session.Advanced.Attachments.Store("users/1", "big.bin", new PatternStream(size), "application/octet-stream");
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            using var result = await session.Advanced.Attachments.GetAsync("users/1", "big.bin");
            Assert.Equal(size, result!.Details.Size);
            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            var buffer = new byte[81920];
            long total = 0;
            int read;
            while ((read = await result.Stream.ReadAsync(buffer)) > 0)
            {
                Assert.True(PatternStream.Matches(buffer.AsSpan(0, read), total), $"byte {total} differs");
                hash.AppendData(buffer, 0, read);
                total += read;
            }

            Assert.Equal(size, total);
            Assert.Equal(Convert.ToBase64String(hash.GetHashAndReset()), result.Details.Hash);
        }
    }

    [Fact]
    public async Task SeveralAttachmentsAreReadInOneRequest()
    {
        using var store = await server.NewStoreAsync();
        using (var session = store.OpenAsyncSession())
        {
            await session.StoreAsync(new User { Id = "users/1", Name = "Ann" });
            await session.StoreAsync(new User { Id = "users/2", Name = "Bob" });
            session.Advanced.Attachments.Store("users/1", "photo", new MemoryStream(Photo));
            session.Advanced.Attachments.Store("users/2", "note", new MemoryStream("hello"u8.ToArray()), "text/plain");
            session.Advanced.Attachments.Store("users/2", "empty", new MemoryStream());
            await session.SaveChangesAsync();
        }

        using (var session = store.OpenAsyncSession())
        {
            await using var attachments = await session.Advanced.Attachments.GetAsync(
                [new AttachmentRequest("users/2", "note"), new AttachmentRequest("users/1", "photo"), new AttachmentRequest("users/2", "empty"), new AttachmentRequest("users/2", "note")]);
            Assert.Equal(1, session.Advanced.NumberOfRequests);
            var seen = new List<(string, string, byte[])>();
            while (await attachments.MoveNextAsync())
            {
                var item = attachments.Current;
                seen.Add((item.Details.DocumentId, item.Details.Name, item.Details.Name == "photo" ? [] : await ReadAllAsync(item.Stream)));
            }

            Assert.Equal(["users/2:note:hello", "users/1:photo:", "users/2:empty:", "users/2:note:hello"], seen.Select(s => $"{s.Item1}:{s.Item2}:{System.Text.Encoding.UTF8.GetString(s.Item3)}"));
        }
    }

    [Fact]
    public async Task TheStoreLevelOperationsPutReadAndDeleteAtOnce()
    {
        using var store = await server.NewStoreAsync();
        string changeVector;
        using (var session = store.OpenAsyncSession())
        {
            var user = new User { Id = "users/1", Name = "Ann" };
            await session.StoreAsync(user);
            await session.SaveChangesAsync();
            changeVector = session.Advanced.GetChangeVectorFor(user)!;
        }

        var first = await store.Operations.SendAsync(new PutAttachmentOperation("users/1", "a.txt", new MemoryStream("old"u8.ToArray()), "text/plain"));
        Assert.NotEqual(changeVector, first.ChangeVector);

        // As in RavenDB, the expected change vector is the attachment's: a stale one (or one for an attachment not there) fails.
        var details = await store.Operations.SendAsync(new PutAttachmentOperation("users/1", "a.txt", new MemoryStream("abc"u8.ToArray()), "text/plain", first.ChangeVector));
        Assert.Equal(("users/1", "a.txt", 3L, "text/plain"), (details.DocumentId, details.Name, details.Size, details.ContentType));
        await Assert.ThrowsAsync<ConcurrencyException>(() => store.Operations.SendAsync(new PutAttachmentOperation("users/1", "a.txt", new MemoryStream([1]), null, first.ChangeVector)));
        await Assert.ThrowsAsync<ConcurrencyException>(() => store.Operations.SendAsync(new PutAttachmentOperation("users/1", "b.txt", new MemoryStream([1]), null, changeVector)));
        var missing = await Assert.ThrowsAsync<DocumentDoesNotExistException>(() => store.Operations.SendAsync(new PutAttachmentOperation("users/none", "a", new MemoryStream([1]))));
        Assert.Contains("users/none", missing.Message);

        using (var result = await store.Operations.SendAsync(new GetAttachmentOperation("users/1", "a.txt", AttachmentType.Document, null)))
        {
            Assert.Equal("abc"u8.ToArray(), await ReadAllAsync(result!.Stream));
            Assert.Equal(details.ChangeVector, result.Details.ChangeVector);
        }

        await store.Operations.SendAsync(new DeleteAttachmentOperation("users/1", "a.txt"));
        Assert.Null(await store.Operations.SendAsync(new GetAttachmentOperation("users/1", "a.txt", AttachmentType.Document, null)));
    }

    private static async Task<byte[]> ReadAllAsync(Stream stream)
    {
        var buffer = new MemoryStream();
        await stream.CopyToAsync(buffer);
        return buffer.ToArray();
    }

    /// <summary>A forward-only stream of <c>size</c> bytes of a fixed pattern, made as it is read (never held).</summary>
    private sealed class PatternStream(long size) : Stream
    {
        private long _position;

        public static bool Matches(ReadOnlySpan<byte> data, long offset)
        {
            for (var i = 0; i < data.Length; i++)
            {
                if (data[i] != At(offset + i))
                {
                    return false;
                }
            }

            return true;
        }

        private static byte At(long position) => (byte)((position * 31) ^ (position >> 9));

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            var count = (int)Math.Min(buffer.Length, size - _position);
            for (var i = 0; i < count; i++)
            {
                buffer[i] = At(_position + i);
            }
            _position += count;
            return count;
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => new(Read(buffer.Span));

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}

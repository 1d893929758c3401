using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Replication;

public class ReplicationAttachmentsTests
{
    private static readonly TimeSpan Converge = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task ADocumentsTwoAttachmentsWrittenOnAReachBAndCIdenticalAndADeleteOnBIsGoneEverywhere()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        var photo = Bytes(200_000, seed: 1);
        var notes = "some notes"u8.ToArray();
        await PutAttachmentAsync(nodes, 0, "users/1", "photo.png", "image/png", photo);
        await PutAttachmentAsync(nodes, 0, "users/1", "Notes.txt", "text/plain", notes);

        await WaitSameAttachmentsAsync(nodes);
        for (var node = 0; node < nodes.Count; node++)
        {
            var list = Attachments(nodes, node, "users/1");
            Assert.Equal(["Notes.txt|text/plain", "photo.png|image/png"], list.Select(a => $"{a.Name}|{a.ContentType}").ToArray());
            Assert.Equal(photo, await GetAttachmentAsync(nodes, node, "users/1", "photo.png"));
            Assert.Equal(notes, await GetAttachmentAsync(nodes, node, "users/1", "Notes.txt"));
        }

        using (var deleted = await nodes.Client(1).DeleteAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(Enumerable.Range(0, nodes.Count).All(n => Attachments(nodes, n, "users/1").Count == 1)), Converge, "the delete to reach every node");
        await WaitSameAttachmentsAsync(nodes);
        for (var node = 0; node < nodes.Count; node++)
        {
            using var gone = await nodes.Client(node).GetAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png");
            Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
            // The photo's content is referenced by nothing any more on any node.
            using var reader = nodes.DatabaseOf(node).BeginRead();
            Assert.Null(reader.GetAttachmentContent(Convert.ToBase64String(SHA256.HashData(photo))));
        }
    }

    [Fact]
    public async Task ANodeDownWhileAttachmentsAreWrittenCatchesUpWithTheirBytes()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: true, "A", "B", "C");
        await nodes.PutAsync(0, "docs/0", new { Number = 0 });
        await nodes.WaitConvergedAsync(Converge);

        await nodes.StopAsync(2);
        // Over a replication frame and a staging step: sent and staged in pieces.
        var large = Bytes(3 * 1024 * 1024 + 17, seed: 2);
        var shared = Bytes(5_000, seed: 3);
        for (var i = 1; i <= 5; i++)
        {
            await nodes.PutAsync(i % 2, $"docs/{i}", new { Number = i });
            await PutAttachmentAsync(nodes, i % 2, $"docs/{i}", "shared.bin", "application/octet-stream", shared);
        }
        await PutAttachmentAsync(nodes, 0, "docs/1", "large.bin", "application/octet-stream", large);
        await PutAttachmentAsync(nodes, 1, "docs/2", "empty.txt", "text/plain", []);
        await nodes.StartAgainAsync(2);

        await WaitSameAttachmentsAsync(nodes);
        Assert.Equal(large, await GetAttachmentAsync(nodes, 2, "docs/1", "large.bin"));
        Assert.Equal(shared, await GetAttachmentAsync(nodes, 2, "docs/5", "shared.bin"));
        Assert.Empty(await GetAttachmentAsync(nodes, 2, "docs/2", "empty.txt"));
        // One content for the five documents that share it, on the node that caught up as on the others.
        using var reader = nodes.DatabaseOf(2).BeginRead();
        Assert.Equal(5, reader.GetAttachmentContent(Convert.ToBase64String(SHA256.HashData(shared)))!.Value.References);
    }

    [Fact]
    public async Task ConflictingVersionsWithDifferentAttachmentsResolveToTheSameAttachmentsEverywhere()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        await nodes.PutAsync(0, "users/1", new { Name = "A's" });
        await PutAttachmentAsync(nodes, 0, "users/1", "a.bin", "application/octet-stream", Bytes(10_000, seed: 4));
        await nodes.PutAsync(1, "users/1", new { Name = "B's" });
        await PutAttachmentAsync(nodes, 1, "users/1", "b.bin", "application/octet-stream", Bytes(10_000, seed: 5));
        nodes.Wire();

        await WaitSameAttachmentsAsync(nodes);
        var winner = Attachments(nodes, 0, "users/1");
        Assert.Single(winner);
        foreach (var attachment in winner)
        {
            Assert.Equal(await GetAttachmentAsync(nodes, 0, "users/1", attachment.Name), await GetAttachmentAsync(nodes, 1, "users/1", attachment.Name));
        }
    }

    [Fact]
    public async Task AContentTheDestinationReleasedIsSentAgainWhenAVersionListingItWins()
    {
        await using var nodes = await ReplicationNodes.StartAsync(wired: false, "A", "B");
        var urlOfB = nodes.Client(1).BaseAddress!.ToString().TrimEnd('/');
        // Only A pushes to B for now (B knows A, at an address where nothing listens).
        nodes.Server(1).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "B", [new Jackdaw.Server.Replication.ReplicationNode("A", "http://127.0.0.1:1")]);
        nodes.Server(0).Host.Server.Replication.SetTopology(ReplicationNodes.Database, "A", [new Jackdaw.Server.Replication.ReplicationNode("B", urlOfB)]);
        await nodes.PutAsync(0, "users/1", new { Name = "Ann" });
        var photo = Bytes(50_000, seed: 6);
        await PutAttachmentAsync(nodes, 0, "users/1", "photo.png", "image/png", photo);
        await nodes.WaitConvergedAsync(Converge);

        // B deletes the attachment (its content goes), A changes the document later: A's version
        // wins the conflict on B, and lists a content A has no reason to think B lacks.
        using (var deleted = await nodes.Client(1).DeleteAsync($"/databases/{ReplicationNodes.Database}/attachments?id=users/1&name=photo.png"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        await nodes.PutAsync(0, "users/1", new { Name = "Ann again" });
        nodes.Wire();

        await WaitSameAttachmentsAsync(nodes);
        Assert.Equal(photo, await GetAttachmentAsync(nodes, 1, "users/1", "photo.png"));
        Assert.Contains("Ann again", nodes.Documents(1)["users/1"].Json, StringComparison.Ordinal);
    }

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static async Task PutAttachmentAsync(ReplicationNodes nodes, int node, string id, string name, string contentType, byte[] content)
    {
        using var body = new ByteArrayContent(content);
        body.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);
        using var response = await nodes.Client(node).PutAsync(
            $"/databases/{ReplicationNodes.Database}/attachments?id={Uri.EscapeDataString(id)}&name={Uri.EscapeDataString(name)}&contentType={Uri.EscapeDataString(contentType)}", body);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private static async Task<byte[]> GetAttachmentAsync(ReplicationNodes nodes, int node, string id, string name)
    {
        using var response = await nodes.Client(node).GetAsync($"/databases/{ReplicationNodes.Database}/attachments?id={Uri.EscapeDataString(id)}&name={Uri.EscapeDataString(name)}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await response.Content.ReadAsByteArrayAsync();
    }

    private static List<Jackdaw.Server.Documents.AttachmentInfo> Attachments(ReplicationNodes nodes, int node, string id)
    {
        using var reader = nodes.DatabaseOf(node).BeginRead();
        return reader.GetAttachments(id);
    }

    /// <summary>Every node's attachments as (id, name, hash, content type, size), with the contents stored.</summary>
    private static string AllAttachments(ReplicationNodes nodes, int node)
    {
        var database = nodes.DatabaseOf(node);
        using var reader = database.BeginRead();
        var lines = new List<string>();
        foreach (var record in reader.GetDocumentsFrom(null, 0))
        {
            foreach (var attachment in reader.GetAttachments(record.Id))
            {
                var stored = reader.GetAttachmentContent(attachment.Hash);
                lines.Add($"{record.Id}/{attachment.Name}:{attachment.Hash}:{attachment.ContentType}:{attachment.Size}:{(stored is null ? "MISSING" : stored.Value.Size)}");
            }
        }
        lines.Sort(StringComparer.Ordinal);
        return string.Join("\n", lines);
    }

    /// <summary>Waits until the nodes hold the same documents, change vectors and attachments (every content stored).</summary>
    private static async Task WaitSameAttachmentsAsync(ReplicationNodes nodes)
    {
        await nodes.WaitConvergedAsync(Converge);
        await Poll.UntilAsync(() => Task.FromResult(Enumerable.Range(1, nodes.Count - 1).All(n => AllAttachments(nodes, n) == AllAttachments(nodes, 0))
            && Enumerable.Range(0, nodes.Count).All(n => !AllAttachments(nodes, n).Contains("MISSING", StringComparison.Ordinal))), Converge, "the same attachments on every node");
        await nodes.WaitConvergedAsync(Converge);
    }
}

using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Subscriptions;

/// <summary>
/// An attachment change is a change of its document: a subscription receives the document again,
/// with <c>@metadata.@attachments</c> as it now is.
/// </summary>
public sealed class SubscriptionAttachmentTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task ASubscriptionReceivesTheDocumentAgainWhenAnAttachmentIsAddedOrRemoved()
    {
        var db = await fixture.CreateDatabaseAsync();
        foreach (var id in new[] { "orders/1", "orders/2" })
        {
            using var put = await Client.PutAsync($"/databases/{db}/docs?id={id}", Api.Json("""{"Freight":10,"@metadata":{"@collection":"Orders"}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        using (var create = await Client.PutAsync($"/databases/{db}/subscriptions", Api.Json("""{"Name":"Orders","Query":"from Orders","ChangeVector":"BeginningOfTime"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        var (worker, status) = await SubscriptionWorker.ConnectAsync(Client.BaseAddress!, db, "Orders");
        await using var scope = worker;
        Assert.Equal("Accepted", status.GetProperty("Status").GetString());
        var first = await worker.BatchAsync();
        Assert.Equal(["orders/1", "orders/2"], SubscriptionWorker.Ids(first).Order());
        Assert.False(first.GetProperty("Items")[0].GetProperty("Data").GetProperty("@metadata").TryGetProperty("@attachments", out _));
        await worker.AckAndConfirmAsync(first);

        var content = new ByteArrayContent("signed time sheet"u8.ToArray());
        content.Headers.ContentType = new MediaTypeHeaderValue("application/pdf");
        using (var put = await Client.PutAsync($"/databases/{db}/attachments?id=orders/2&name=sheet.pdf&contentType=application%2Fpdf", content))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        var second = await worker.BatchAsync();
        var item = Assert.Single(second.GetProperty("Items").EnumerateArray());
        Assert.Equal("orders/2", item.GetProperty("Id").GetString());
        var metadata = item.GetProperty("Data").GetProperty("@metadata");
        var attachment = Assert.Single(metadata.GetProperty("@attachments").EnumerateArray());
        Assert.Equal("sheet.pdf", attachment.GetProperty("Name").GetString());
        Assert.Equal("application/pdf", attachment.GetProperty("ContentType").GetString());
        Assert.Equal(17, attachment.GetProperty("Size").GetInt64());
        Assert.Equal(Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData("signed time sheet"u8)), attachment.GetProperty("Hash").GetString());
        Assert.Equal("HasAttachments", metadata.GetProperty("@flags").GetString());
        Assert.Equal(metadata.GetProperty("@change-vector").GetString(), item.GetProperty("ChangeVector").GetString());
        await worker.AckAndConfirmAsync(second);

        using (var delete = await Client.DeleteAsync($"/databases/{db}/attachments?id=orders/2&name=sheet.pdf"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        var third = await worker.BatchAsync();
        item = Assert.Single(third.GetProperty("Items").EnumerateArray());
        Assert.Equal("orders/2", item.GetProperty("Id").GetString());
        metadata = item.GetProperty("Data").GetProperty("@metadata");
        Assert.False(metadata.TryGetProperty("@attachments", out _));
        Assert.False(metadata.TryGetProperty("@flags", out _));
        await worker.AckAndConfirmAsync(third);
    }
}

using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

public class DatabasesTests
{
    private static async Task<JsonElement> JsonAsync(HttpResponseMessage response) =>
        JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement.Clone();

    private static async Task<string[]> ListAsync(HttpClient client)
    {
        using var response = await client.GetAsync("/admin/databases");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await JsonAsync(response)).GetProperty("Databases").EnumerateArray().Select(e => e.GetString()!).ToArray();
    }

    [Fact]
    public async Task CreateListDeleteRoundTrip()
    {
        await using var server = await InProcessServer.StartAsync();
        var client = server.Client;
        Assert.Empty(await ListAsync(client));

        using (var created = await client.PutAsync("/admin/databases?name=Northwind", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
            Assert.Equal("Northwind", (await JsonAsync(created)).GetProperty("Name").GetString());
        }
        using (await client.PutAsync("/admin/databases?name=alpha.2", null))
        {
        }
        Assert.Equal(["alpha.2", "Northwind"], await ListAsync(client));
        Assert.True(Directory.Exists(Path.Combine(server.DataDir, "Databases", "Northwind")));

        using (var deleted = await client.DeleteAsync("/admin/databases?name=northwind"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        Assert.Equal(["alpha.2"], await ListAsync(client));
        Assert.False(Directory.Exists(Path.Combine(server.DataDir, "Databases", "Northwind")));
    }

    [Fact]
    public async Task CreatingAnExistingDatabaseIs409InAnyCasing()
    {
        await using var server = await InProcessServer.StartAsync();
        using (await server.Client.PutAsync("/admin/databases?name=Shop", null))
        {
        }
        using var again = await server.Client.PutAsync("/admin/databases?name=SHOP", null);
        Assert.Equal(HttpStatusCode.Conflict, again.StatusCode);
        Assert.Equal("DatabaseAlreadyExistsException", (await JsonAsync(again)).GetProperty("Type").GetString());
    }

    [Theory]
    [InlineData("?name=")]
    [InlineData("")]
    [InlineData("?name=has%20space")]
    [InlineData("?name=..")]
    [InlineData("?name=a/b")]
    [InlineData("?name=caf%C3%A9")]
    [InlineData("?name=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]
    public async Task BadNamesAre400(string query)
    {
        await using var server = await InProcessServer.StartAsync();
        using var response = await server.Client.PutAsync($"/admin/databases{query}", null);
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        var body = await JsonAsync(response);
        Assert.Equal("BadRequestException", body.GetProperty("Type").GetString());
        Assert.Contains("name", body.GetProperty("Message").GetString()!, StringComparison.OrdinalIgnoreCase);
        Assert.Empty(await ListAsync(server.Client));
    }

    [Fact]
    public async Task DeletingAMissingDatabaseIs503DatabaseDoesNotExist()
    {
        await using var server = await InProcessServer.StartAsync();
        using var response = await server.Client.DeleteAsync("/admin/databases?name=ghost");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal("DatabaseDoesNotExistException", (await JsonAsync(response)).GetProperty("Type").GetString());
    }

    [Fact]
    public async Task DatabasesFoundAtStartupAreListed()
    {
        using var data = new TempFolder();
        Directory.CreateDirectory(Path.Combine(data.Path, "Databases", "Existing"));
        using var process = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await process.WaitForAddressAsync(TimeSpan.FromSeconds(60));
        using var client = new HttpClient { BaseAddress = address };
        Assert.Equal(["Existing"], await ListAsync(client));
    }
}

using System.Net;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// Document properties are case-sensitive, and so are auto-index fields: a query on <c>name</c>
/// after one on <c>Name</c> widens the auto-index to both. They once collapsed into one field, and
/// the query on <c>name</c> was a 400 ("the index has no field 'name'").
/// </summary>
public sealed class AutoIndexFieldCaseTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<(long Total, string Index)> QueryAsync(string db, string rql)
    {
        using var response = await Client.PostAsync($"/databases/{db}/queries", Api.Json(JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true })));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{rql}: {json}");
        return (json.GetProperty("TotalResults").GetInt64(), json.GetProperty("IndexName").GetString()!);
    }

    [Fact]
    public async Task FieldsThatDifferOnlyInCaseAreTwoFields()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"a","name":"b","@metadata":{"@collection":"Users"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }
        Assert.Equal((1, "Auto/Users/ByName"), await QueryAsync(db, "from Users where Name = 'a'"));
        Assert.Equal((1, "Auto/Users/ByNameAndname"), await QueryAsync(db, "from Users where name = 'b'"));
        Assert.Equal((0, "Auto/Users/ByNameAndname"), await QueryAsync(db, "from Users where name = 'a'"));
        Assert.Equal((1, "Auto/Users/ByNameAndname"), await QueryAsync(db, "from Users where Name = 'a' and name = 'b'"));
    }
}

using System.Globalization;

namespace Jackdaw.Server.Hosting;

// RavenDB's clients send the version of the database's client configuration they hold
// (Client-Configuration-Etag, quoted); an answer to a database's request carries
// Refresh-Client-Configuration: true when the server's is newer, and the client fetches it
// (GET /databases/{db}/configuration/client).
public sealed partial class RequestPipeline
{
    private const string ClientConfigurationEtagHeader = "Client-Configuration-Etag";
    private const string RefreshClientConfigurationHeader = "Refresh-Client-Configuration";

    private void TellOfNewerClientConfiguration(HttpContext http, string path)
    {
        const string Prefix = "/databases/";
        if (!http.Request.Headers.TryGetValue(ClientConfigurationEtagHeader, out var sent) || !path.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return;
        }
        var end = path.IndexOf('/', Prefix.Length);
        if (end <= Prefix.Length)
        {
            return;
        }
        var database = path[Prefix.Length..end];
        if (database.Contains('%', StringComparison.Ordinal))
        {
            database = Uri.UnescapeDataString(database);
        }
        var text = sent.ToString().Trim('"');
        var held = long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var etag) ? etag : 0;
        if (_server.Cluster.ClientConfigurationEtagOf(database) > held)
        {
            http.Response.Headers[RefreshClientConfigurationHeader] = "true";
        }
    }
}

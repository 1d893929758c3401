// The bare Kestrel reference for perf/load: one RequestDelegate, one fixed JSON body: by default
// of the same size as Jackdaw's /build/version answer, or of --body-bytes N bytes (the size of a
// document response). Usage: dotnet BareKestrel.dll --urls http://127.0.0.1:18081 [--body-bytes 1100]
//
// HTTPS (the reference for a secured Jackdaw, perf/load/https.sh): --cert names a PFX file (with
// --cert-password) or a PEM certificate (with --cert-key, the PEM key, when the key is not in the
// same file), and every URL in --urls is https://. Like a secured Jackdaw it asks for a client
// certificate in the handshake and requires one; it accepts any, so the TLS work is the same and
// the check of who the client is costs nothing here:
//   dotnet BareKestrel.dll --urls https://127.0.0.1:18443 --cert server.pfx --cert-password x
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Server.Kestrel.Https;

var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(kestrel => kestrel.AddServerHeader = false);
if (builder.Configuration["cert"] is { } certPath)
{
    var certificate = certPath.EndsWith(".pfx", StringComparison.OrdinalIgnoreCase) || certPath.EndsWith(".p12", StringComparison.OrdinalIgnoreCase)
        ? X509CertificateLoader.LoadPkcs12FromFile(certPath, builder.Configuration["cert-password"])
        : X509Certificate2.CreateFromPemFile(certPath, builder.Configuration["cert-key"]);
    builder.WebHost.UseKestrelHttpsConfiguration(); // the slim builder leaves https:// URLs out
    builder.WebHost.ConfigureKestrel(kestrel => kestrel.ConfigureHttpsDefaults(https =>
    {
        https.ServerCertificate = certificate;
        https.ClientCertificateMode = ClientCertificateMode.RequireCertificate;
        https.ClientCertificateValidation = static (_, _, _) => true;
    }));
}
var app = builder.Build();
var body = """{"Version":"0.1.0","FullVersion":"0.1.0+0000000000000000000000000000000000000000","CommitHash":"0000000000000000000000000000000000000000"}"""u8.ToArray();
if (int.TryParse(builder.Configuration["body-bytes"], out var size) && size > 16)
{
    body = System.Text.Encoding.UTF8.GetBytes("{\"Results\":[{\"Text\":\"" + new string('x', size - 32) + "\"}],\"Includes\":{}}");
}
app.Run(context =>
{
    context.Response.StatusCode = 200;
    context.Response.ContentType = "application/json; charset=utf-8";
    context.Response.ContentLength = body.Length;
    var write = context.Response.BodyWriter.WriteAsync(body);
    return write.IsCompletedSuccessfully ? Task.CompletedTask : write.AsTask();
});
app.Run();

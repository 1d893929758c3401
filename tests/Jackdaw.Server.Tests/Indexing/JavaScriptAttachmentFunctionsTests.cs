using System.Text;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.JavaScript;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// RavenDB's attachment functions of JavaScript maps (<c>attachmentsFor</c>, <c>loadAttachment</c>,
/// <c>loadAttachments</c>) over a loader that holds attachments in memory: the details, the content
/// as text in each encoding, the limit on the text, and what a map may not do with them.
/// </summary>
public sealed class JavaScriptAttachmentFunctionsTests
{
    private static readonly string PhotoHash = Convert.ToBase64String(new byte[32]);

    private sealed class AttachmentLoader : IMapDocumentLoader
    {
        public Dictionary<string, List<(AttachmentInfo Info, byte[] Content)>> Attachments { get; } = new(StringComparer.OrdinalIgnoreCase);

        public int Opened { get; private set; }

        public MapInput? Load(string id) => null;

        public IReadOnlyList<AttachmentInfo> GetAttachments(string documentId) =>
            Attachments.TryGetValue(documentId, out var list) ? list.Select(a => a.Info).ToList() : [];

        public Stream? OpenAttachment(string documentId, string name)
        {
            Opened++;
            return Attachments.TryGetValue(documentId, out var list) && list.FirstOrDefault(a => string.Equals(a.Info.Name, name, StringComparison.OrdinalIgnoreCase)) is { Info: not null } found
                ? new MemoryStream(found.Content)
                : null;
        }

        public void Add(string id, string name, byte[] content, string contentType = "text/plain")
        {
            if (!Attachments.TryGetValue(id, out var list))
            {
                Attachments[id] = list = [];
            }
            list.Add((new AttachmentInfo(name, Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(content)), contentType, content.Length), content));
        }
    }

    private static MapInput Doc(string id, string json = """{"Name":"Acme"}""")
    {
        using var context = new JsonOperationContext();
        return new MapInput(id, "Companies", context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray());
    }

    private static Dictionary<string, object?> MapSingle(string map, AttachmentLoader loader, string id = "companies/1", JavaScriptLimits? limits = null)
    {
        using var index = JavaScriptMapper.Compile("Test", [map], limits);
        var output = new MapOutput();
        index.Map(Doc(id), loader, output);
        return Assert.Single(output.Entries).ToDictionary(f => f.Name, f => f.Value);
    }

    [Fact]
    public void AttachmentsForGivesNameHashContentTypeAndSizeOfEach()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "logo.png", [1, 2, 3], "image/png");
        loader.Add("companies/1", "notes.txt", Encoding.UTF8.GetBytes("hello"));
        var entry = MapSingle("map('Companies', c => { const a = attachmentsFor(c); return { Names: a.map(x => x.Name), Types: a.map(x => x.ContentType), Sizes: a.map(x => x.Size), Hash: a[0].Hash, Count: a.length }; })", loader);
        Assert.Equal(new object?[] { "logo.png", "notes.txt" }, (IEnumerable<object?>)entry["Names"]!);
        Assert.Equal(new object?[] { "image/png", "text/plain" }, (IEnumerable<object?>)entry["Types"]!);
        Assert.Equal(new object?[] { 3L, 5L }, (IEnumerable<object?>)entry["Sizes"]!);
        Assert.Equal(Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(new byte[] { 1, 2, 3 })), entry["Hash"]);
        Assert.Equal(2L, entry["Count"]);
        Assert.Equal(0, loader.Opened);
    }

    [Fact]
    public void ADocumentWithoutAttachmentsHasAnEmptyList()
    {
        var entry = MapSingle("map('Companies', c => ({ Count: attachmentsFor(c).length, All: loadAttachments(c).length, One: loadAttachment(c, 'x') === null }))", new AttachmentLoader());
        Assert.Equal(0L, entry["Count"]);
        Assert.Equal(0L, entry["All"]);
        Assert.Equal(true, entry["One"]);
    }

    [Fact]
    public void LoadAttachmentReadsItsContentAsUtf8ByDefaultAndFindsTheNameInAnyCasing()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "Notes.txt", Encoding.UTF8.GetBytes("Grüße aus Köln"));
        var entry = MapSingle("map('Companies', c => { const a = loadAttachment(c, 'notes.TXT'); return { Name: a.Name, Size: a.Size, Text: a.getContentAsString(), Again: a.getContentAsString('utf-8') }; })", loader);
        Assert.Equal("Notes.txt", entry["Name"]);
        Assert.Equal((long)Encoding.UTF8.GetByteCount("Grüße aus Köln"), entry["Size"]);
        Assert.Equal("Grüße aus Köln", entry["Text"]);
        Assert.Equal("Grüße aus Köln", entry["Again"]);
    }

    [Theory]
    [InlineData("utf16")]
    [InlineData("Unicode")]
    public void GetContentAsStringTakesAnEncodingName(string name)
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "notes.txt", Encoding.Unicode.GetBytes("wide text"));
        var entry = MapSingle($"map('Companies', c => ({{ Text: loadAttachment(c, 'notes.txt').getContentAsString('{name}') }}))", loader);
        Assert.Equal("wide text", entry["Text"]);
    }

    [Fact]
    public void AnUnknownEncodingIsAnIndexErrorListingTheKnownOnes()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "notes.txt", [65]);
        var error = Assert.Throws<IndexMapException>(() => MapSingle("map('Companies', c => ({ Text: loadAttachment(c, 'notes.txt').getContentAsString('ebcdic') }))", loader));
        Assert.Contains("'ebcdic'", error.Message, StringComparison.Ordinal);
        Assert.Contains("'utf8'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void LoadAttachmentsGivesEveryAttachmentWithItsContent()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "a.txt", Encoding.UTF8.GetBytes("alpha"));
        loader.Add("companies/1", "b.txt", Encoding.UTF8.GetBytes("beta"));
        var entry = MapSingle("map('Companies', c => ({ Texts: loadAttachments(c).map(a => a.Name + '=' + a.getContentAsString()) }))", loader);
        Assert.Equal(new object?[] { "a.txt=alpha", "b.txt=beta" }, (IEnumerable<object?>)entry["Texts"]!);
    }

    [Fact]
    public void AnAttachmentOverTheTextLimitFailsTheDocumentNamingBothSizes()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "big.txt", new byte[2_000]);
        loader.Add("companies/1", "small.txt", new byte[10]);
        var limits = JavaScriptLimits.Default with { MaxAttachmentBytes = 1_000 };
        var error = Assert.Throws<IndexMapException>(() => MapSingle("map('Companies', c => ({ Text: loadAttachment(c, 'big.txt').getContentAsString() }))", loader, limits: limits));
        Assert.Contains("'big.txt'", error.Message, StringComparison.Ordinal);
        Assert.Contains("2,000 bytes", error.Message, StringComparison.Ordinal);
        Assert.Contains("1,000 bytes", error.Message, StringComparison.Ordinal);
        Assert.Contains("MaxAttachmentBytes", error.Message, StringComparison.Ordinal);
        // The details of the large one stay readable, and a small one's content too.
        var entry = MapSingle("map('Companies', c => ({ Size: loadAttachment(c, 'big.txt').Size, Text: loadAttachment(c, 'small.txt').getContentAsString().length }))", loader, limits: limits);
        Assert.Equal(2_000L, entry["Size"]);
        Assert.Equal(10L, entry["Text"]);
    }

    [Fact]
    public void AnAttachmentKeptInAGlobalCannotBeReadInALaterCall()
    {
        var loader = new AttachmentLoader();
        loader.Add("companies/1", "notes.txt", Encoding.UTF8.GetBytes("first"));
        loader.Add("companies/2", "notes.txt", Encoding.UTF8.GetBytes("second"));
        using var index = JavaScriptMapper.Compile("Test", ["var kept; map('Companies', c => { const mine = loadAttachment(c, 'notes.txt'); const old = kept; kept = mine; return { Text: old ? old.getContentAsString() : mine.getContentAsString() }; })"]);
        var output = new MapOutput();
        index.Map(Doc("companies/1"), loader, output);
        var error = Assert.Throws<IndexMapException>(() => index.Map(Doc("companies/2"), loader, new MapOutput()));
        Assert.Contains("earlier map call", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AttachmentsForTakesADocumentNotAString()
    {
        var error = Assert.Throws<IndexMapException>(() => MapSingle("map('Companies', c => ({ N: attachmentsFor('companies/1').length }))", new AttachmentLoader()));
        Assert.Contains("attachmentsFor(doc) takes a document", error.Message, StringComparison.Ordinal);
        error = Assert.Throws<IndexMapException>(() => MapSingle("map('Companies', c => ({ N: loadAttachment(c, 7) }))", new AttachmentLoader()));
        Assert.Contains("name as a string", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void CallingThemWhileCompilingIsACompileError()
    {
        var error = Assert.Throws<Jackdaw.Server.Errors.IndexCompilationException>(() => JavaScriptMapper.Compile("Test", ["attachmentsFor({}); map('Companies', c => ({}))"]));
        Assert.Contains("while a document is mapped", error.Message, StringComparison.Ordinal);
    }
}

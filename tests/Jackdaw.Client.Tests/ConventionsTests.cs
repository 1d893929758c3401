using System.Text.Json;
using Jackdaw.Client.Conventions;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests;

public class ConventionsTests
{
    [Theory]
    [InlineData(typeof(User), "Users")]
    [InlineData(typeof(Company), "Companies")]
    [InlineData(typeof(Address), "Addresses")]
    [InlineData(typeof(OrderLine), "OrderLines")]
    [InlineData(typeof(Status), "Statuses")]
    [InlineData(typeof(List<int>), "Lists")]
    public void DefaultCollectionNamePluralizesTheTypeName(Type type, string expected) =>
        Assert.Equal(expected, DocumentConventions.DefaultFindCollectionName(type));

    [Theory]
    [InlineData("Person", "People")]
    [InlineData("SalesPerson", "SalesPeople")]
    [InlineData("Box", "Boxes")]
    [InlineData("Church", "Churches")]
    [InlineData("Day", "Days")]
    [InlineData("Child", "Children")]
    [InlineData("Equipment", "Equipment")]
    [InlineData("Category", "Categories")]
    public void InflectorPluralizesTheLastWord(string word, string plural) => Assert.Equal(plural, Inflector.Pluralize(word));

    [Fact]
    public void DefaultIdPrefixIsTheLowerCasedCollectionWithSlash() =>
        Assert.Equal("companies/", new DocumentConventions().GetEntityTypeInfo(typeof(Company)).IdPrefix);

    [Fact]
    public void TypeInfoIsComputedOnceAndCached()
    {
        var conventions = new DocumentConventions();
        Assert.Same(conventions.GetEntityTypeInfo(typeof(User)), conventions.GetEntityTypeInfo(typeof(User)));
    }

    [Fact]
    public void CompiledIdAccessorsReadAndWriteTheIdProperty()
    {
        var info = new DocumentConventions().GetEntityTypeInfo(typeof(User));
        var user = new User { Id = "users/1" };

        Assert.Equal("users/1", info.GetId!(user));
        info.SetId!(user, "users/2");
        Assert.Equal("users/2", user.Id);
        Assert.Equal("Id"u8.ToArray(), info.IdJsonName);
    }

    [Fact]
    public void ARecordsInitOnlyIdIsWritable()
    {
        var info = new DocumentConventions().GetEntityTypeInfo(typeof(Product));
        var product = new Product(null, "p", 1m, Status.Pending);
        info.SetId!(product, "products/1");
        Assert.Equal("products/1", product.Id);
    }

    [Fact]
    public void IdPropertyNameAndJsonNamingPolicyAreHonoured()
    {
        var conventions = new DocumentConventions
        {
            IdPropertyName = "Key",
            SerializerOptions = new JsonSerializerOptions(JsonSerializerDefaults.Web),
        };
        conventions.Freeze();
        var info = conventions.GetEntityTypeInfo(typeof(Widget));

        Assert.Equal("k", info.GetId!(new Widget { Key = "k" }));
        Assert.Equal("key"u8.ToArray(), info.IdJsonName);
    }

    [Fact]
    public async Task CustomCollectionAndClrTypeConventionsAreSent()
    {
        var fake = new FakeJackdaw(TestStores.Database);
        using var store = TestStores.Create(fake, s =>
        {
            s.Conventions.FindCollectionName = t => "X" + t.Name;
            s.Conventions.TransformCollectionNameToDocumentIdPrefix = c => c + "-";
            s.Conventions.FindClrTypeName = t => t.Name;
        });
        using var session = store.OpenAsyncSession();
        await session.StoreAsync(new User(), "XUser|");
        await session.SaveChangesAsync();

        var document = fake.Requests.Single().BodyJson["Commands"]![0]!["Document"]!;
        Assert.Equal("XUser", (string?)document["@metadata"]!["@collection"]);
        Assert.Equal("User", (string?)document["@metadata"]!["Jackdaw-Clr-Type"]);
        Assert.Equal("XUser-", store.Conventions.GetEntityTypeInfo(typeof(User)).IdPrefix);
    }

    [Fact]
    public void ConventionsAndStoreSettingsAreFrozenByInitialize()
    {
        using var store = new DocumentStore { Urls = ["http://127.0.0.1:1"], Database = "db" }.Initialize();

        Assert.Throws<InvalidOperationException>(() => store.Conventions.IdPropertyName = "Key");
        Assert.Throws<InvalidOperationException>(() => store.Database = "other");
        Assert.True(store.Conventions.SerializerOptions.IsReadOnly);
    }

    [Fact]
    public void InitializeRejectsMissingOrInvalidUrls()
    {
        Assert.Contains("Urls is empty", Assert.Throws<InvalidOperationException>(() => new DocumentStore().Initialize()).Message);
        Assert.Contains("not an http", Assert.Throws<InvalidOperationException>(() => new DocumentStore { Urls = ["localhost:8080"] }.Initialize()).Message);
    }

    [Fact]
    public void OpeningASessionWithoutADatabaseSaysHowToFixIt()
    {
        using var store = new DocumentStore { Urls = ["http://127.0.0.1:1"] }.Initialize();
        Assert.Contains("DocumentStore.Database", Assert.Throws<InvalidOperationException>(() => store.OpenAsyncSession()).Message);
    }

    [Fact]
    public void ATypeThatIsNotAJsonObjectCannotBeADocument()
    {
        var error = Assert.Throws<InvalidOperationException>(() => new DocumentConventions().GetEntityTypeInfo(typeof(List<string>)));
        Assert.Contains("JSON object", error.Message);
    }
}

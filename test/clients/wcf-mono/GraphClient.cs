// A .NET connector's first job, written against the .NET WCF Data Services client
// (System.Data.Services.Client, as Mono ships it) the way its users write it: a product with its
// variations (and their characteristics), images and catalog links, built on the context and
// saved in one SaveChanges, then read back through the same client. The classes below stand in
// for what "Add Service Reference" generates: every key and foreign key a non-nullable long.
//
// Usage: mono GraphClient.exe <service root> <SubscriptionToken> <.ASPXAUTH> <catalog id> <batch|single>
// Prints the graph it read back, one line per fact, and exits 0; any exception exits 1.
using System;
using System.Collections.ObjectModel;
using System.Data.Services.Client;
using System.Data.Services.Common;
using System.Linq;

[DataServiceKey("Id")]
public class Product {
  public long Id { get; set; }
  public string Title { get; set; }
  public decimal Price { get; set; }
  public int StockAmount { get; set; }
  public int ProductType { get; set; }
  public Collection<ProductVariation> ProductVariations { get; set; }
  public Collection<ProductImage> ProductImages { get; set; }
  public Collection<Catalog> Catalogs { get; set; }
  public Product() { ProductVariations = new Collection<ProductVariation>(); ProductImages = new Collection<ProductImage>(); Catalogs = new Collection<Catalog>(); }
}

[DataServiceKey("Id")]
public class ProductVariation {
  public long Id { get; set; }
  public long ProductId { get; set; }
  public decimal Price { get; set; }
  public int StockAmount { get; set; }
  public string Sku { get; set; }
  public Product Product { get; set; }
  public Collection<ProductVariationSpecific> ProductVariationSpecifics { get; set; }
  public ProductVariation() { ProductVariationSpecifics = new Collection<ProductVariationSpecific>(); }
}

[DataServiceKey("Id")]
public class ProductVariationSpecific {
  public long Id { get; set; }
  public long ProductVariationId { get; set; }
  public string Name { get; set; }
  public string Value { get; set; }
}

[DataServiceKey("Id")]
public class ProductImage {
  public long Id { get; set; }
  public long ProductId { get; set; }
  public string ImageUrl { get; set; }
  public int? Type { get; set; }
  public Product Product { get; set; }
}

[DataServiceKey("Id")]
public class Catalog {
  public long Id { get; set; }
  public string Name { get; set; }
}

public static class GraphClient {
  public static int Main(string[] args) {
    try {
      Run(args[0], args[1], args[2], long.Parse(args[3]), args[4] == "batch");
      return 0;
    } catch (Exception e) {
      Console.Error.WriteLine(e.ToString());
      var request = e as DataServiceRequestException;
      if (request != null) foreach (var response in request.Response) Console.Error.WriteLine("operation answered " + response.StatusCode);
      return 1;
    }
  }

  static DataServiceContext Context(string root, string token, string cookie) {
    var ctx = new DataServiceContext(new Uri(root));
    // The entity types live in the service's namespace; the classes here in none.
    ctx.ResolveName = type => "CatalogueService." + type.Name;
    ctx.ResolveType = name => Type.GetType(name.Substring(name.LastIndexOf('.') + 1));
    ctx.IgnoreMissingProperties = true;
    ctx.SendingRequest += (sender, e) => {
      e.RequestHeaders["SubscriptionToken"] = token;
      e.RequestHeaders["Cookie"] = ".ASPXAUTH=" + cookie;
    };
    return ctx;
  }

  static void Run(string root, string token, string cookie, long catalogId, bool batch) {
    var ctx = Context(root, token, cookie);
    var product = new Product { Title = "From the .NET client", Price = 19.99m, StockAmount = 4 };
    ctx.AddObject("Products", product);
    var medium = new ProductVariation { Sku = "NET-M", Price = 21.5m, StockAmount = 2 };
    var large = new ProductVariation { Sku = "NET-L", Price = 22.5m, StockAmount = 1 };
    // AddRelatedObject: POST Products(id)/ProductVariations with ProductId still 0.
    ctx.AddRelatedObject(product, "ProductVariations", medium);
    ctx.AddRelatedObject(product, "ProductVariations", large);
    ctx.AddRelatedObject(medium, "ProductVariationSpecifics", new ProductVariationSpecific { Name = "Size", Value = "M" });
    ctx.AddRelatedObject(large, "ProductVariationSpecifics", new ProductVariationSpecific { Name = "Size", Value = "L" });
    // AddObject + SetLink: the image with ProductId 0, its product named by a link.
    var image = new ProductImage { ImageUrl = "https://img.example/net.jpg", Type = 1 };
    ctx.AddObject("ProductImages", image);
    ctx.SetLink(image, "Product", product);
    // AddLink to a catalog that exists: POST Products(id)/$links/Catalogs.
    var catalog = new Catalog { Id = catalogId };
    ctx.AttachTo("Catalogs", catalog);
    ctx.AddLink(product, "Catalogs", catalog);
    ctx.SaveChanges(batch ? SaveChangesOptions.Batch : SaveChangesOptions.None);
    Console.WriteLine("product " + product.Id);

    // Read the graph back through a fresh context, as a later run of the connector would.
    var reader = Context(root, token, cookie);
    var read = reader.Execute<Product>(new Uri(root + "/Products(" + product.Id + "L)?$expand=ProductVariations/ProductVariationSpecifics,ProductImages,Catalogs")).Single();
    foreach (var v in read.ProductVariations.OrderBy(v => v.Sku)) {
      Console.WriteLine("variation " + v.Sku + " " + v.ProductId + " " + string.Join(",", v.ProductVariationSpecifics.Select(s => s.Name + "=" + s.Value).ToArray()));
    }
    foreach (var i in read.ProductImages) Console.WriteLine("image " + i.ImageUrl + " " + i.ProductId);
    foreach (var c in read.Catalogs) Console.WriteLine("catalog " + c.Id);
  }
}

import { Module } from '@nestjs/common';
import { AssetsController, PagesController } from './pages.controller';
import { SchemesController } from './schemes.controller';
import { WebAssets } from './web-assets.service';

/**
 * The web pages: HTML shells, their static scripts and styles (plain ES modules under web/assets,
 * no build step), and the one public endpoint the sign-in page needs to pick its scheme.
 */
@Module({
  controllers: [SchemesController, PagesController, AssetsController],
  providers: [WebAssets],
})
export class WebModule {}
